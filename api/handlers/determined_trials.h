// Determined's trial-side REST API, as its own Python package (`determined`, 0.38) calls it from a
// trial: metrics, progress, checkpoints, the preemption long poll and its acknowledgement, early
// exits, and the reads its harness makes. The caller is the trial's process, holding its task
// session token (Access::kTask); it reaches only its own live run's trial. Every report is an
// event (commands::ReportTrial), and a retried one is answered without a second.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response ReportTrialMetrics(Call& call);     // POST /api/v1/trials/{id}/metrics
net::Response ReportTrialProgress(Call& call);    // POST /api/v1/trials/{id}/progress
net::Response ReportTrialEarlyExit(Call& call);   // POST /api/v1/trials/{id}/early_exit
net::Response TrialRunnerMetadata(Call& call);    // POST /api/v1/trials/{id}/runner/metadata
net::Response ReportCheckpoint(Call& call);       // POST /api/v1/checkpoints
net::Response StartRun(Call& call);               // POST /api/v1/runs/start
net::Response PreemptionSignal(Call& call);       // GET /api/v1/allocations/{id}/signals/preemption
net::Response AcknowledgePreemption(Call& call);  // POST .../signals/ack_preemption
// GET /api/v1/trials/{id}: a user's read, or the trial's own process reading its trial.
net::Response GetTrialForUserOrTask(Call& call);
// GET /api/v1/experiments/{id}/searcher/best_searcher_validation_metric; 404 before any.
net::Response BestSearcherValidationMetric(Call& call);

}  // namespace cairn::api
