#include "api/handlers/profiler.h"

#include <array>
#include <chrono>
#include <optional>
#include <string_view>

#include "api/handlers/experiment_common.h"
#include "api/render/experiment_json.h"
#include "base/clock.h"

namespace cairn::api {

using nlohmann::json;

namespace {

constexpr std::string_view kSystemMetric = "PROFILER_METRIC_TYPE_SYSTEM";
constexpr std::string_view kGpuGroup = "gpu";
constexpr std::string_view kDiskGroup = "disk";
// How long a following stream waits for a new event before it checks its client is still there.
constexpr auto kFollowWait = std::chrono::seconds(1);

// Determined's profiler groups by the prefix of their metrics' names.
struct ProfilerGroup {
  std::string_view group;
  std::string_view prefix;
};
constexpr std::array<ProfilerGroup, 5> kProfilerGroups = {{{"cpu", "cpu_"},
                                                           {"gpu", "gpu_"},
                                                           {"memory", "memory_"},
                                                           {"disk", "disk_"},
                                                           {"network", "net_"}}};

bool IsProfilerGroup(const std::string& group) {
  for (const auto& known : kProfilerGroups) {
    if (known.group == group) return true;
  }
  return false;
}

std::optional<std::string_view> GroupOfMetric(const std::string& name) {
  for (const auto& known : kProfilerGroups) {
    if (name.starts_with(known.prefix)) return known.group;
  }
  return std::nullopt;
}

json Label(int64_t trial_id, const std::string& name, const std::string& agent,
           const std::string& gpu) {
  return {{"trialId", trial_id},
          {"name", name},
          {"agentId", agent},
          {"gpuUuid", gpu},
          {"metricType", kSystemMetric}};
}

// The series of one report of `group`, as Determined lists them: a metric per agent, GPU metrics
// per GPU too; disks' per-path metrics are left out (Determined's web UI does not chart them).
void AddSeries(int64_t trial_id, const std::string& group, const json& report, json& labels) {
  for (const auto& [agent, metrics] : report.items()) {
    if (!metrics.is_object()) continue;
    for (const auto& [key, value] : metrics.items()) {
      if (!value.is_object()) {
        labels.push_back(Label(trial_id, key, agent, ""));
        continue;
      }
      if (group == kDiskGroup) continue;
      for (const auto& [name, inner] : value.items()) {
        static_cast<void>(inner);
        labels.push_back(Label(trial_id, name, agent, group == kGpuGroup ? key : ""));
      }
    }
  }
}

// Every series in the latest report of each profiler group.
json AvailableSeries(const std::vector<views::WorkloadView>& workloads, int64_t trial_id) {
  std::map<std::string, const views::WorkloadView*> latest;
  for (const auto& workload : workloads) {
    if (IsProfilerGroup(workload.group())) latest[workload.group()] = &workload;
  }
  json labels = json::array();
  for (const auto& [group, workload] : latest) {
    AddSeries(trial_id, group, JsonObjectOf(workload->metrics_json()), labels);
  }
  return labels;
}

struct SeriesQuery {
  int64_t trial_id = 0;
  std::string name;
  std::string group;
  std::string agent;  // "" = every agent
  std::string gpu;    // "" = every GPU (GPU metrics only)
};

json Batch(const SeriesQuery& query, const views::WorkloadView& workload, double value,
           const std::string& agent, const std::string& gpu) {
  return {{"result",
           {{"batch",
             {{"values", {value}},
              {"batches", {workload.total_batches()}},
              {"timestamps", {FormatRfc3339(workload.end_time_unix_micros())}},
              {"labels", Label(query.trial_id, query.name, agent, gpu)}}}}}};
}

// The points of the query's series in one report, each as one NDJSON line.
void AppendPoints(const SeriesQuery& query, const views::WorkloadView& workload, std::string& out) {
  const json report = JsonObjectOf(workload.metrics_json());
  for (const auto& [agent, metrics] : report.items()) {
    if (!query.agent.empty() && agent != query.agent) continue;
    if (!metrics.is_object()) continue;
    if (query.group == kGpuGroup) {
      for (const auto& [gpu, values] : metrics.items()) {
        if (!query.gpu.empty() && gpu != query.gpu) continue;
        if (!values.is_object()) continue;
        auto value = values.find(query.name);
        if (value == values.end() || !value->is_number()) continue;
        out += Batch(query, workload, value->get<double>(), agent, gpu).dump() + "\n";
      }
      continue;
    }
    auto value = metrics.find(query.name);
    if (value == metrics.end() || !value->is_number()) continue;
    out += Batch(query, workload, value->get<double>(), agent, "").dump() + "\n";
  }
}

// Streams what `render` makes of the trial's workloads: once, or with `follow` each time a new
// event is applied, until the trial has ended (after one last look) or the client leaves.
// `render` gets the workloads and returns the text to write (may be empty).
using RenderWorkloads = std::function<std::string(const std::vector<views::WorkloadView>&)>;
net::Response StreamTrialWorkloads(Call& call, int64_t trial_id, bool follow,
                                   RenderWorkloads render) {
  net::Response response;
  response.content_type = "application/x-ndjson";
  response.stream = [projections = call.services().projections, stopping = call.services().stopping,
                     trial_id, follow, render = std::move(render)](const net::ChunkWriter& write) {
    uint64_t rendered_at = 0;  // the trial's last event when its workloads were last read
    bool first = true;
    while (stopping == nullptr || !stopping->load()) {
      const uint64_t applied = projections->AppliedOffset();
      auto trial = projections->GetTrial(trial_id);
      const bool ended = !trial.ok() || !*trial || (*trial)->ended();
      // Every report of the trial changes its view: other events wake the stream, not a read.
      const uint64_t trial_at = trial.ok() && *trial ? (*trial)->last_event_offset() : 0;
      if (first || trial_at != rendered_at) {
        auto workloads = projections->ListWorkloads(trial_id);
        if (!workloads.ok()) return;
        if (std::string text = render(*workloads); !text.empty() && !write(text)) return;
        rendered_at = trial_at;
        first = false;
      }
      if (!follow || ended) return;
      const Status waited = projections->WaitForOffset(applied, kFollowWait);
      if (!waited.ok() && waited.code() != StatusCode::kDeadlineExceeded) return;
      if (!write("")) return;
    }
  };
  return response;
}

}  // namespace

net::Response TrialProfilerAvailableSeries(Call& call) {
  auto trial = LoadTrial(call, call.Param("id"));
  if (!trial.ok()) return Error(trial.status());
  const bool follow = call.request().QueryParam("follow") == "true";
  const int64_t trial_id = trial->trial_id();
  return StreamTrialWorkloads(
      call, trial_id, follow,
      [trial_id, last = std::string()](const std::vector<views::WorkloadView>& workloads) mutable {
        std::string message =
            json{{"result", {{"labels", AvailableSeries(workloads, trial_id)}}}}.dump() + "\n";
        if (message == last) return std::string();
        last = message;
        return message;
      });
}

net::Response TrialProfilerMetrics(Call& call) {
  auto trial = LoadTrial(call, call.Param("id"));
  if (!trial.ok()) return Error(trial.status());
  const bool follow = call.request().QueryParam("follow") == "true";
  SeriesQuery query;
  query.trial_id = trial->trial_id();
  query.name = call.request().QueryParam("labels.name");
  query.agent = call.request().QueryParam("labels.agentId");
  query.gpu = call.request().QueryParam("labels.gpuUuid");
  const std::string& type = call.request().QueryParam("labels.metricType");
  if (!type.empty() && type != kSystemMetric) {
    return Error(Status::InvalidArgument(
        "labels.metricType: only PROFILER_METRIC_TYPE_SYSTEM is recorded (Determined's package "
        "reports no timings)"));
  }
  auto group = GroupOfMetric(query.name);
  if (!group) {
    return Error(Status::InvalidArgument(
        "labels.name must name a system metric: cpu_*, gpu_*, memory_*, disk_* or net_*"));
  }
  query.group = *group;
  return StreamTrialWorkloads(
      call, query.trial_id, follow,
      [query, sent = uint64_t{0}](const std::vector<views::WorkloadView>& workloads) mutable {
        std::string out;
        for (const auto& workload : workloads) {
          if (workload.offset() < sent || workload.group() != query.group) continue;
          AppendPoints(query, workload, out);
          sent = workload.offset() + 1;
        }
        return out;
      });
}

}  // namespace cairn::api
