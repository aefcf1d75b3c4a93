#include "api/handlers/trials.h"

#include <limits>
#include <map>
#include <set>

#include "api/handlers/checkpoints.h"
#include "api/handlers/experiment_common.h"
#include "api/log_stream.h"
#include "api/render/experiment_json.h"
#include "api/rest_util.h"
#include "base/clock.h"
#include "commands/experiments/experiment_state.h"

namespace cairn::api {

using nlohmann::json;

net::Response GetTrial(Call& call) {
  const std::string& id = call.Param("id");
  auto trial = LoadTrial(call, id);
  if (!trial.ok()) return Error(trial.status());
  return Ok({{"trial", TrialJson(*trial)}});
}

namespace {

// Determined's MetricsReport (GET /api/v1/trials/metrics/...): one report of a group.
json MetricsReportJson(const views::WorkloadView& workload, const std::string& group) {
  json report = {{"id", std::to_string(workload.offset())},
                 {"trialId", workload.trial_id()},
                 {"totalBatches", workload.total_batches()},
                 {"group", group},
                 {"archived", false},
                 {"trialRunId", 0},
                 {"metrics", {{"avg_metrics", JsonObjectOf(workload.metrics_json())}}}};
  if (workload.end_time_unix_micros() != 0) {
    report["endTime"] = FormatRfc3339(workload.end_time_unix_micros());
  }
  return report;
}

std::string GroupOf(const views::WorkloadView& workload) {
  if (!workload.group().empty()) return workload.group();
  if (workload.kind() == events::WORKLOAD_KIND_TRAIN) return "training";
  if (workload.kind() == events::WORKLOAD_KIND_VALIDATE) return "validation";
  return "";
}

// The reports of `group` of every trial ?trialIds= names that the caller may see, as Determined's
// stream of them (one line here: what the trials have reported so far).
net::Response MetricsOfGroup(Call& call, const std::string& group) {
  if (group.empty()) return Error(Status::InvalidArgument("group is required"));
  std::vector<std::string> ids = call.request().QueryParams("trialIds");
  if (ids.empty()) return Error(Status::InvalidArgument("trialIds is required"));
  json reports = json::array();
  for (const auto& id : ids) {
    auto trial = LoadTrial(call, id);
    if (!trial.ok()) return Error(trial.status());
    auto workloads = call.services().projections->ListWorkloads(trial->trial_id());
    if (!workloads.ok()) return Error(workloads.status());
    for (const auto& workload : *workloads) {
      if (GroupOf(workload) == group) reports.push_back(MetricsReportJson(workload, group));
    }
  }
  net::Response response;
  response.content_type = "application/x-ndjson";
  response.body = json{{"result", {{"metrics", reports}}}}.dump() + "\n";
  return response;
}

}  // namespace

namespace {

// CompareTrials' budget: points a series keeps when the caller names none, and the most it may ask.
constexpr size_t kDefaultMaxDatapoints = 1000;
constexpr size_t kMaxDatapoints = 100'000;
constexpr size_t kMaxCompareTrials = 1000;
// The most lines one experiment-wide log search answers with.
constexpr size_t kMaxSearchLines = 100'000;

std::string MetricTypeOf(const std::string& group) {
  if (group == "training") return "METRIC_TYPE_TRAINING";
  if (group == "validation") return "METRIC_TYPE_VALIDATION";
  if (group == "profiling") return "METRIC_TYPE_PROFILING";
  return "METRIC_TYPE_UNSPECIFIED";
}

Result<std::string> GroupParam(const net::Request& request) {
  std::string group = request.QueryParam("group");
  const std::string type = request.QueryParam("metricType");
  if (type.empty() || type == "METRIC_TYPE_UNSPECIFIED") return group;
  std::string typed = type == "METRIC_TYPE_TRAINING"     ? "training"
                      : type == "METRIC_TYPE_VALIDATION" ? "validation"
                      : type == "METRIC_TYPE_PROFILING"  ? "profiling"
                                                         : "";
  if (typed.empty()) {
    return Status::InvalidArgument("metricType '" + type +
                                   "' is not METRIC_TYPE_TRAINING, _VALIDATION or _PROFILING");
  }
  if (!group.empty() && group != typed) {
    return Status::InvalidArgument("group '" + group + "' and metricType '" + type + "' disagree");
  }
  return typed;
}

// The series of `trial_id` the query names: metricIds ("group.name"), metricNames of the group,
// or, when it names none, every series (of the group, when one is given).
Result<std::vector<projections::MetricSeriesName>> ChosenSeries(Call& call, int64_t trial_id,
                                                                const std::string& group) {
  const net::Request& request = call.request();
  std::vector<projections::MetricSeriesName> chosen;
  for (const std::string& id : request.QueryParams("metricIds")) {
    const size_t dot = id.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == id.size()) {
      return Status::InvalidArgument("metricIds '" + id + "' is not group.metric_name");
    }
    chosen.push_back({id.substr(0, dot), id.substr(dot + 1)});
  }
  const std::vector<std::string> names = request.QueryParams("metricNames");
  if (!names.empty() && group.empty()) {
    return Status::InvalidArgument("metricNames needs group or metricType");
  }
  for (const std::string& name : names) chosen.push_back({group, name});
  if (!chosen.empty()) return chosen;
  return call.services().projections->ListMetricSeries(trial_id, group);
}

}  // namespace

// GET /api/v1/trials/time-series: Determined's CompareTrials. Each series is downsampled on its
// own (base/downsample.h keeps every bucket's extremes), then a group's series are joined by batch
// into data points {batches, time, values}.
net::Response CompareTrials(Call& call) {
  const net::Request& request = call.request();
  for (const auto& [name, value] : request.query) {
    if (name.rfind("timeSeriesFilter", 0) == 0) {
      return Error(
          Status::InvalidArgument("timeSeriesFilter is not supported by Cairn; ask for "
                                  "startBatches and endBatches instead"));
    }
  }
  const std::vector<std::string> ids = request.QueryParams("trialIds");
  if (ids.empty()) return Error(Status::InvalidArgument("trialIds is required"));
  if (ids.size() > kMaxCompareTrials) {
    return Error(Status::InvalidArgument("at most " + std::to_string(kMaxCompareTrials) +
                                         " trialIds at once"));
  }
  auto budget = CountParam(request, "maxDatapoints", kDefaultMaxDatapoints, 0, kMaxDatapoints);
  if (!budget.ok()) return Error(budget.status());
  const size_t max_points = *budget == 0 ? kDefaultMaxDatapoints : *budget;
  constexpr size_t kNoBatchLimit = static_cast<size_t>(std::numeric_limits<int64_t>::max());
  auto start = CountParam(request, "startBatches", 0, 0, kNoBatchLimit);
  if (!start.ok()) return Error(start.status());
  auto end = CountParam(request, "endBatches", kNoBatchLimit, 0, kNoBatchLimit);
  if (!end.ok()) return Error(end.status());
  auto group = GroupParam(request);
  if (!group.ok()) return Error(group.status());

  Projections* projections = call.services().projections;
  json trials = json::array();
  for (const std::string& id : ids) {
    auto trial = LoadTrial(call, id);
    if (!trial.ok()) return Error(trial.status());
    auto chosen = ChosenSeries(call, trial->trial_id(), *group);
    if (!chosen.ok()) return Error(chosen.status());
    // group -> batches -> point; a group's series share the points of equal batches.
    std::map<std::string, std::map<int64_t, json>> groups;
    for (const auto& series : *chosen) {
      auto read =
          projections->ReadMetricSeries(trial->trial_id(), series, static_cast<int64_t>(*start),
                                        static_cast<int64_t>(*end), max_points);
      if (!read.ok()) return Error(read.status());
      auto& points = groups[series.group];
      for (const projections::MetricPoint& point : read->points) {
        json& data = points[point.batches];
        if (data.is_null()) {
          data = {{"batches", point.batches},
                  {"time", FormatRfc3339(point.time_unix_micros)},
                  {"values", json::object()}};
        }
        data["values"][series.name] = point.value;
      }
    }
    json metrics = json::array();
    for (auto& [name, points] : groups) {
      json data = json::array();
      for (auto& [batches, point] : points) data.push_back(std::move(point));
      metrics.push_back({{"group", name}, {"type", MetricTypeOf(name)}, {"data", std::move(data)}});
    }
    trials.push_back({{"trial", TrialJson(*trial)}, {"metrics", std::move(metrics)}});
  }
  return Ok({{"trials", std::move(trials)}});
}

// GET /api/v1/experiments/metrics-stream/metric-names?ids=: Determined streams the names as
// trials report new ones; here one line holds every name reported so far.
net::Response ExperimentMetricNames(Call& call) {
  const std::vector<std::string> ids = call.request().QueryParams("ids");
  if (ids.empty()) return Error(Status::InvalidArgument("ids is required"));
  std::set<std::pair<std::string, std::string>> names;
  std::set<std::string> searcher_metrics;
  Projections* projections = call.services().projections;
  for (const std::string& id : ids) {
    auto experiment = LoadExperiment(call, id);
    if (!experiment.ok()) return Error(experiment.status());
    if (!experiment->searcher_metric().empty()) {
      searcher_metrics.insert(experiment->searcher_metric());
    }
    auto trials = projections->ListTrials(experiment->experiment_id());
    if (!trials.ok()) return Error(trials.status());
    for (const auto& trial : *trials) {
      auto series = projections->ListMetricSeries(trial.trial_id(), "");
      if (!series.ok()) return Error(series.status());
      for (auto& one : *series) names.insert({std::move(one.group), std::move(one.name)});
    }
  }
  json identifiers = json::array(), training = json::array(), validation = json::array();
  for (const auto& [group, name] : names) {
    identifiers.push_back({{"group", group}, {"name", name}});
    if (group == "training") training.push_back(name);
    if (group == "validation") validation.push_back(name);
  }
  net::Response response;
  response.content_type = "application/x-ndjson";
  response.body = json{{"result",
                        {{"metricNames", identifiers},
                         {"trainingMetrics", training},
                         {"validationMetrics", validation},
                         {"searcherMetrics", searcher_metrics}}}}
                      .dump() +
                  "\n";
  return response;
}

// GET /api/v1/experiments/{id}/logs?searchText=&limit= (Cairn's own): the lines of every run of
// every trial of the experiment that hold the text, in either case; each names its trial.
net::Response SearchExperimentLogs(Call& call) {
  auto experiment = LoadExperiment(call, call.Param("id"));
  if (!experiment.ok()) return Error(experiment.status());
  const std::string text = call.request().QueryParam("searchText");
  if (text.empty()) return Error(Status::InvalidArgument("searchText is required"));
  auto limit = CountParam(call.request(), "limit", 0, 0, kMaxSearchLines);
  if (!limit.ok()) return Error(limit.status());
  auto trials = call.services().projections->ListTrials(experiment->experiment_id());
  if (!trials.ok()) return Error(trials.status());
  std::vector<std::pair<std::string, int64_t>> tasks;
  for (const auto& trial : *trials) {
    for (int run = 1; run <= trial.runs(); ++run) {
      tasks.emplace_back(
          commands::TrialRunTaskId(experiment->experiment_id(), trial.trial_id(), run),
          trial.trial_id());
      tasks.emplace_back(commands::LegacyTrialRunTaskId(trial.trial_id(), run), trial.trial_id());
    }
  }
  return SearchTaskLogs(call.services(), tasks, text, *limit == 0 ? kMaxSearchLines : *limit);
}

net::Response TrialMetrics(Call& call) {
  return MetricsOfGroup(call, call.request().QueryParam("group"));
}
net::Response TrialTrainingMetrics(Call& call) { return MetricsOfGroup(call, "training"); }
net::Response TrialValidationMetrics(Call& call) { return MetricsOfGroup(call, "validation"); }

net::Response TrialWorkloads(Call& call) {
  const std::string& id = call.Param("id");
  auto trial = LoadTrial(call, id);
  if (!trial.ok()) return Error(trial.status());
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  auto workloads = call.services().projections->ListWorkloads(trial->trial_id());
  if (!workloads.ok()) return Error(workloads.status());
  auto [page, pagination] = Page(std::move(*workloads), *paging);
  json list = json::array();
  for (const auto& workload : page) {
    // A group of the user's own is no workload of Determined's; it is read by its group.
    if (workload.kind() != events::WORKLOAD_KIND_UNSPECIFIED)
      list.push_back(WorkloadJson(workload));
  }
  return Ok({{"workloads", list}, {"pagination", pagination}});
}

net::Response TrialLogs(Call& call) {
  const std::string& id = call.Param("id");
  auto trial = LoadTrial(call, id);
  if (!trial.ok()) return Error(trial.status());
  const bool follow = call.request().QueryParam("follow") == "true";
  Projections* projections = call.services().projections;
  const int64_t trial_id = trial->trial_id();
  const int64_t experiment_id = trial->experiment_id();
  auto window = ParseLogWindow(call.request());
  if (!window.ok()) return Error(window.status());
  return StreamTaskLogs(call.services(), follow, *window, [projections, trial_id, experiment_id] {
    LogSources sources;
    sources.trial_id = trial_id;
    auto current = projections->GetTrial(trial_id);
    if (!current.ok() || !*current) {
      sources.ended = true;
      return sources;
    }
    for (int run = 1; run <= (*current)->runs(); ++run) {
      sources.task_ids.push_back(commands::TrialRunTaskId(experiment_id, trial_id, run));
      sources.task_ids.push_back(commands::LegacyTrialRunTaskId(trial_id, run));
    }
    sources.ended = (*current)->ended();
    return sources;
  });
}

net::Response KillTrialRoute(Call& call) {
  auto trial = LoadTrial(call, call.Param("id"));
  if (!trial.ok()) return Error(trial.status());
  auto outcome = call.ExecuteAndShow(commands::KillTrial{trial->trial_id()});
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

net::Response TrialCheckpoints(Call& call) {
  const std::string& id = call.Param("id");
  auto trial = LoadTrial(call, id);
  if (!trial.ok()) return Error(trial.status());
  return ListCheckpointsOf(call, std::to_string(trial->experiment_id()), trial->trial_id());
}

}  // namespace cairn::api
