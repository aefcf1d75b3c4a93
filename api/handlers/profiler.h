// Determined's profiler reads (the web UI's system-metrics charts): the system metrics a trial's
// profiler reported (Determined's package with `profiling.enabled`, or
// core_context.profiler.on(), reports groups cpu, gpu, memory, disk and network, each
// {agent id: {metric: value}} with GPU metrics under each GPU's UUID) read back as series.
// Both stream NDJSON; with ?follow=true they keep going until the trial ends. Anyone who may see
// the trial may read them.
#pragma once

#include "api/call.h"

namespace cairn::api {

// GET /api/v1/trials/{id}/profiler/available_series: {"result": {"labels": [...]}}, one label
// {trialId, name, agentId, gpuUuid, metricType} per series of the latest report of each group;
// with follow, again each time the set changes.
net::Response TrialProfilerAvailableSeries(Call& call);
// GET /api/v1/trials/{id}/profiler/metrics?labels.name=N[&labels.agentId=A][&labels.gpuUuid=G]:
// one {"result": {"batch": {values, batches, timestamps, labels}}} per report holding the
// series, in report order; without an agent (or, for a GPU metric, without a GPU) every agent's
// (every GPU's) series, each labelled. The name's prefix names its group (cpu_, gpu_, memory_,
// disk_, net_); any other name is refused.
net::Response TrialProfilerMetrics(Call& call);

}  // namespace cairn::api
