#include "replay/whatif_format.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/clock.h"
#include "commands/scheduler/scheduler.h"

namespace cairn::replay {

namespace {

double Seconds(int64_t micros) { return static_cast<double>(micros) / 1e6; }

std::string Fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string Right(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string Left(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

const char* FittingName(events::FittingPolicy policy) {
  return policy == events::FITTING_POLICY_WORST ? "worst" : "best";
}

std::string PoolsText(const events::ResourcePoolsConfigured& pools) {
  std::string text;
  for (const auto& pool : pools.pools()) {
    const auto& scheduler = pool.scheduler();
    text += (text.empty() ? "" : "; ") + pool.pool_name() + " " +
            commands::SchedulerTypeName(scheduler.type());
    if (scheduler.type() == events::SCHEDULER_TYPE_PRIORITY) {
      text += scheduler.preemption() ? " with preemption" : " without preemption";
    }
    text += std::string(", ") + FittingName(scheduler.fitting_policy()) + " fit";
  }
  return text;
}

nlohmann::json PoolsJson(const events::ResourcePoolsConfigured& pools) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& pool : pools.pools()) {
    list.push_back({{"name", pool.pool_name()},
                    {"scheduler", commands::SchedulerTypeName(pool.scheduler().type())},
                    {"preemption", pool.scheduler().preemption()},
                    {"fitting_policy", FittingName(pool.scheduler().fitting_policy())},
                    {"default_priority", pool.scheduler().default_priority()}});
  }
  return {{"pools", list},
          {"default_compute_pool", pools.default_compute_pool()},
          {"default_aux_pool", pools.default_aux_pool()}};
}

std::string UserName(const std::string& user) { return user.empty() ? "(none)" : user; }

std::string WorkspaceName(const WhatIfReport& report, int32_t workspace_id) {
  auto name = report.workspace_names.find(workspace_id);
  const std::string id = "#" + std::to_string(workspace_id);
  return name == report.workspace_names.end() ? id : name->second + " (" + id + ")";
}

nlohmann::json WaitsJson(const WaitFigures& figures) {
  nlohmann::json waits = nullptr;
  if (figures.started > 0) {
    waits = {{"p50", Seconds(figures.p50)},
             {"p95", Seconds(figures.p95)},
             {"max", Seconds(figures.max)}};
  }
  return {{"tasks", figures.tasks}, {"started", figures.started}, {"wait_seconds", waits}};
}

nlohmann::json ColumnJson(const WhatIfColumn& column) {
  nlohmann::json json = WaitsJson(column.all);
  json["finished"] = column.finished;
  json["makespan_seconds"] = Seconds(column.makespan);
  json["busy_slot_seconds"] = Seconds(column.busy_slot_micros);
  json["available_slot_seconds"] = Seconds(column.available_slot_micros);
  auto utilization = column.utilization();
  json["slot_utilization"] = utilization ? nlohmann::json(*utilization) : nlohmann::json(nullptr);
  json["preemptions"] = column.preemptions;
  return json;
}

// The groups of both columns under one key each; a group only one column has is empty in the
// other (a pool the other configuration lacks).
template <typename Key>
std::set<Key> KeysOf(const std::map<Key, WaitFigures>& actual,
                     const std::map<Key, WaitFigures>& whatif) {
  std::set<Key> keys;
  for (const auto& entry : actual) keys.insert(entry.first);
  for (const auto& entry : whatif) keys.insert(entry.first);
  return keys;
}

template <typename Key>
WaitFigures FiguresOf(const std::map<Key, WaitFigures>& groups, const Key& key) {
  auto it = groups.find(key);
  return it == groups.end() ? WaitFigures{} : it->second;
}

// One row per group: a label and the figures of both columns.
struct Row {
  std::string label;
  WaitFigures actual;
  WaitFigures whatif;
};

std::vector<Row> Rows(const WhatIfReport& report) {
  std::vector<Row> rows{{"all", report.actual.all, report.whatif.all}};
  for (const auto& pool : KeysOf(report.actual.by_pool, report.whatif.by_pool)) {
    rows.push_back({"pool " + pool, FiguresOf(report.actual.by_pool, pool),
                    FiguresOf(report.whatif.by_pool, pool)});
  }
  for (const auto& user : KeysOf(report.actual.by_user, report.whatif.by_user)) {
    rows.push_back({"user " + UserName(user), FiguresOf(report.actual.by_user, user),
                    FiguresOf(report.whatif.by_user, user)});
  }
  for (int32_t id : KeysOf(report.actual.by_workspace, report.whatif.by_workspace)) {
    rows.push_back({"workspace " + WorkspaceName(report, id),
                    FiguresOf(report.actual.by_workspace, id),
                    FiguresOf(report.whatif.by_workspace, id)});
  }
  return rows;
}

std::string WaitCells(const WaitFigures& figures) {
  auto wait = [&](int64_t micros) {
    return Right(figures.started > 0 ? Fixed(Seconds(micros), 1) : "-", 9);
  };
  return Right(std::to_string(figures.tasks), 6) + Right(std::to_string(figures.started), 8) +
         wait(figures.p50) + wait(figures.p95) + wait(figures.max);
}

}  // namespace

std::string WhatIfTable(const WhatIfReport& report) {
  std::ostringstream out;
  const auto& window = report.window;
  out << "what if: " << report.actual.all.tasks << " task(s) submitted from "
      << FormatRfc3339(report.first_submission) << " to " << FormatRfc3339(report.last_submission)
      << " (window: " << (window.from ? FormatRfc3339(*window.from) : "the log's start") << " to "
      << (window.until ? FormatRfc3339(*window.until) : "the log's end") << "; " << report.events
      << " events, the log ends " << FormatRfc3339(report.log_end) << ")\n";
  out << "actual:  " << PoolsText(report.recorded_pools) << " (as recorded)\n";
  out << "what-if: " << PoolsText(report.whatif_pools) << " (" << report.config_source;
  if (report.job_rules > 0) out << ", " << report.job_rules << " job rule(s)";
  out << ")\n\n";

  const std::vector<Row> rows = Rows(report);
  size_t label_width = 8;
  for (const Row& row : rows) label_width = std::max(label_width, row.label.size() + 2);
  const std::string heading = "  tasks started      p50      p95      max";
  out << Left("waits (s)", label_width) << " |" << Left(" actual", heading.size())
      << " | what-if\n";
  out << Left("", label_width) << " |" << heading << " |" << heading << "\n";
  for (const Row& row : rows) {
    out << Left(row.label, label_width) << " |" << WaitCells(row.actual) << " |"
        << WaitCells(row.whatif) << "\n";
  }

  auto utilization = [](const WhatIfColumn& column) {
    auto value = column.utilization();
    return value ? Fixed(100 * *value, 1) + "%" : std::string("-");
  };
  const size_t width = 12;
  out << "\n"
      << Left("", 20) << Right("actual", width) << Right("what-if", width) << "\n"
      << Left("finished", 20) << Right(std::to_string(report.actual.finished), width)
      << Right(std::to_string(report.whatif.finished), width) << "\n"
      << Left("makespan (s)", 20) << Right(Fixed(Seconds(report.actual.makespan), 1), width)
      << Right(Fixed(Seconds(report.whatif.makespan), 1), width) << "\n"
      << Left("slot utilization", 20) << Right(utilization(report.actual), width)
      << Right(utilization(report.whatif), width) << "\n"
      << Left("preemptions", 20) << Right(std::to_string(report.actual.preemptions), width)
      << Right(std::to_string(report.whatif.preemptions), width) << "\n";
  return out.str();
}

std::string WhatIfJson(const WhatIfReport& report) {
  auto time_or_null = [](const std::optional<int64_t>& micros) {
    return micros ? nlohmann::json(FormatRfc3339(*micros)) : nlohmann::json(nullptr);
  };
  nlohmann::json json;
  json["window"] = {{"from", time_or_null(report.window.from)},
                    {"until", time_or_null(report.window.until)},
                    {"first_submission", FormatRfc3339(report.first_submission)},
                    {"last_submission", FormatRfc3339(report.last_submission)},
                    {"log_end", FormatRfc3339(report.log_end)},
                    {"events", report.events}};
  nlohmann::json whatif_config = PoolsJson(report.whatif_pools);
  whatif_config["file"] = report.config_source;
  whatif_config["job_rules"] = report.job_rules;
  json["configuration"] = {{"actual", PoolsJson(report.recorded_pools)}, {"whatif", whatif_config}};
  json["overall"] = {{"actual", ColumnJson(report.actual)}, {"whatif", ColumnJson(report.whatif)}};
  auto groups = [](const auto& actual, const auto& whatif, auto key_text) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& key : KeysOf(actual, whatif)) {
      object[key_text(key)] = {{"actual", WaitsJson(FiguresOf(actual, key))},
                               {"whatif", WaitsJson(FiguresOf(whatif, key))}};
    }
    return object;
  };
  auto same = [](const std::string& key) { return key; };
  json["pools"] = groups(report.actual.by_pool, report.whatif.by_pool, same);
  json["users"] = groups(report.actual.by_user, report.whatif.by_user, same);
  json["workspaces"] = groups(report.actual.by_workspace, report.whatif.by_workspace,
                              [](int32_t id) { return std::to_string(id); });
  for (auto& [id, workspace] : json["workspaces"].items()) {
    auto name = report.workspace_names.find(std::stoi(id));
    workspace["name"] = name == report.workspace_names.end() ? nlohmann::json(nullptr)
                                                             : nlohmann::json(name->second);
  }
  return json.dump(2) + "\n";
}

}  // namespace cairn::replay
