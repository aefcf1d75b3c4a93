// Trials (`det trial describe/logs`, `det experiment create -f`): read from the experiments
// projection; logs stream every run of the trial in order.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response GetTrial(Call& call);          // GET /api/v1/trials/{id}
net::Response TrialWorkloads(Call& call);    // GET /api/v1/trials/{id}/workloads
net::Response TrialLogs(Call& call);         // GET /api/v1/trials/{id}/logs[?follow=true]
net::Response TrialCheckpoints(Call& call);  // GET /api/v1/trials/{id}/checkpoints
net::Response KillTrialRoute(Call& call);    // POST /api/v1/trials/{id}/kill
// Determined's metric reads, by group, of the trials ?trialIds= names:
net::Response TrialMetrics(Call& call);          // GET /api/v1/trials/metrics/trial_metrics
net::Response TrialTrainingMetrics(Call& call);  // .../metrics/training_metrics
net::Response CompareTrials(Call& call);         // GET /api/v1/trials/time-series
// GET /api/v1/experiments/{id}/logs?searchText=
net::Response SearchExperimentLogs(Call& call);
// GET /api/v1/experiments/metrics-stream/metric-names
net::Response ExperimentMetricNames(Call& call);
net::Response TrialValidationMetrics(Call& call);  // .../metrics/validation_metrics

}  // namespace cairn::api
