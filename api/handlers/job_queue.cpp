#include "api/handlers/job_queue.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "api/render/job_json.h"
#include "api/render_cache.h"
#include "api/rest_util.h"
#include "base/clock.h"

namespace cairn::api {

using nlohmann::json;

namespace {

constexpr size_t kMaxExplainedJobs = 200;

net::Response ListJobs(Call& call, bool wrapped) {
  auto paging = ReadPaging(call.request());
  if (!paging.ok()) return Error(paging.status());
  const std::string explain = call.request().QueryParam("explain");
  if (!explain.empty() && explain != "true" && explain != "false") {
    return Error(Status::InvalidArgument("explain: expected true or false"));
  }
  // Each explanation reads the writer's state under its lock: a page's worth, never a queue's.
  const bool explained = explain == "true";
  if (explained && (paging->limit == 0 || paging->limit > kMaxExplainedJobs)) {
    return Error(Status::InvalidArgument("explain=true needs a limit of 1 to " +
                                         std::to_string(kMaxExplainedJobs) + " jobs"));
  }
  const std::string pool = call.request().QueryParam("resourcePool");
  const bool descending = call.request().QueryParam("orderBy") == "ORDER_BY_DESC";
  std::set<std::string> states;
  for (const auto& state : call.request().QueryParams("states")) states.insert(state);
  std::vector<JobView> page;
  json pagination;
  if (states.empty()) {
    // The page alone, from the queue's ordered indexes: its cost does not grow with the queue.
    auto read =
        call.services().projections->JobQueuePage(pool, paging->offset, paging->limit, descending);
    if (!read.ok()) return Error(read.status());
    const size_t start = std::min(paging->offset, read->total);
    pagination = {{"offset", paging->offset},
                  {"limit", paging->limit},
                  {"startIndex", start},
                  {"endIndex", start + read->jobs.size()},
                  {"total", read->total}};
    page = std::move(read->jobs);
  } else {
    // A filter by state needs every job's state: the whole queue.
    auto jobs = call.services().projections->JobQueue(pool);
    if (!jobs.ok()) return Error(jobs.status());
    std::erase_if(*jobs,
                  [&](const JobView& job) { return !states.count(JobStateName(job.state())); });
    if (descending) std::reverse(jobs->begin(), jobs->end());
    std::tie(page, pagination) = Page(std::move(*jobs), *paging);
  }
  // Each job's entry as text, kept by everything it is rendered from (the view's bytes, its
  // owner's id, whether the caller sees it, the shape): a queue's head changes rarely while the
  // queue itself grows, so a page costs its reads and few renders.
  auto render_entry = [&](const JobView& job, int user_id, bool visible) {
    json rendered = JobJson(job, user_id);
    if (!visible) {
      // Determined's LimitedJob: the queue's shape without whose work it is.
      json limited;
      for (const char* key : {"allocatedSlots", "isPreemptible", "jobId", "requestedSlots",
                              "resourcePool", "type", "workspaceId", "summary"}) {
        limited[key] = std::move(rendered[key]);
      }
      return JsonText(wrapped ? json{{"limited", std::move(limited)}} : limited);
    }
    if (explained && job.tasks_size() > 0) {
      auto explanation = call.services().writer->Explain(job.tasks(0).task_id(), NowUnixMicros());
      if (explanation.ok()) rendered["cairn"]["explanation"] = explanation->reason;
    }
    return JsonText(wrapped ? json{{"full", std::move(rendered)}} : rendered);
  };
  RenderCache* renders = explained ? nullptr : call.services().renders;
  net::Response answer;
  answer.body = R"({"jobs":[)";
  for (size_t i = 0; i < page.size(); ++i) {
    const JobView& job = page[i];
    const int user_id = call.UserIdOf(job.user());
    const bool visible = call.CanView(job.workspace_id());
    auto render = [&] { return render_entry(job, user_id, visible); };
    if (i > 0) answer.body += ',';
    if (renders == nullptr) {
      answer.body += render();
      continue;
    }
    std::string key = wrapped ? "job v2 " : "job v1 ";
    key += std::to_string(user_id);
    key += visible ? " full " : " limited ";
    key += job.SerializeAsString();
    answer.body += renders->Get(key, render);
  }
  answer.body += R"(],"pagination":)";
  answer.body += JsonText(pagination);
  answer.body += '}';
  return answer;
}

}  // namespace

net::Response JobQueueV2(Call& call) { return ListJobs(call, /*wrapped=*/true); }
net::Response JobQueue(Call& call) { return ListJobs(call, /*wrapped=*/false); }

net::Response JobQueueStats(Call& call) {
  auto pools = call.services().projections->ListPools();
  if (!pools.ok()) return Error(pools.status());
  std::vector<std::string> pool_names;
  for (const auto& pool : *pools) pool_names.push_back(pool.config().pool_name());
  auto jobs = call.services().projections->JobQueue("");
  if (!jobs.ok()) return Error(jobs.status());
  std::map<std::string, std::pair<int, int>> counts;  // pool -> (queued, scheduled)
  for (const auto& job : *jobs) {
    auto& [queued, scheduled] = counts[job.resource_pool()];
    (job.state() == views::JOB_STATE_QUEUED ? queued : scheduled)++;
  }
  for (const auto& [pool, unused] : counts) {
    if (std::find(pool_names.begin(), pool_names.end(), pool) == pool_names.end()) {
      pool_names.push_back(pool);  // a pool the configuration no longer has, still with jobs
    }
  }
  auto wanted = call.request().QueryParams("resourcePools");
  json results = json::array();
  for (const auto& pool : pool_names) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), pool) == wanted.end()) continue;
    auto [queued, scheduled] = counts[pool];
    results.push_back({{"resourcePool", pool},
                       {"stats", {{"queuedCount", queued}, {"scheduledCount", scheduled}}},
                       {"aggregates", json::array()}});
  }
  return Ok({{"results", results}});
}

Result<commands::UpdateJob> ParseJobUpdate(const json& object, const std::string& path,
                                           JobUpdateShape shape) {
  if (!object.is_object()) return Status::InvalidArgument(path + " must be an object");
  const std::string at = path + ".";
  if (shape == JobUpdateShape::kQueueEntry) {
    CAIRN_RETURN_IF_ERROR(CheckKnownKeys(
        object, path,
        {"jobId", "priority", "weight", "resourcePool", "aheadOf", "behindOf", "maxSlots"}));
  } else {
    CAIRN_RETURN_IF_ERROR(
        CheckKnownKeys(object, path, {"priority", "weight", "maxSlots", "resourcePool"}));
  }
  commands::UpdateJob update;
  if (shape == JobUpdateShape::kQueueEntry) {
    CAIRN_ASSIGN_OR_RETURN(update.job_id, GetString(object, "jobId", at + "jobId", true));
    if (update.job_id.empty()) return Status::InvalidArgument(at + "jobId must not be empty");
  }
  CAIRN_ASSIGN_OR_RETURN(update.priority, GetInt32(object, "priority", at + "priority"));
  CAIRN_ASSIGN_OR_RETURN(update.max_slots, GetInt32(object, "maxSlots", at + "maxSlots"));
  if (Present(object, "weight")) {
    if (!object.at("weight").is_number()) {
      return Status::InvalidArgument(at + "weight must be a number");
    }
    update.weight = object.at("weight").get<double>();
  }
  CAIRN_ASSIGN_OR_RETURN(std::string pool,
                         GetString(object, "resourcePool", at + "resourcePool", false));
  if (!pool.empty()) update.resource_pool = pool;
  if (shape == JobUpdateShape::kQueueEntry) {
    CAIRN_ASSIGN_OR_RETURN(update.ahead_of, GetString(object, "aheadOf", at + "aheadOf", false));
    CAIRN_ASSIGN_OR_RETURN(update.behind_of, GetString(object, "behindOf", at + "behindOf", false));
  }
  return update;
}

net::Response UpdateJobQueue(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(*body, "", {"updates"}); !known.ok()) return Error(known);
  if (!Present(*body, "updates") || !body->at("updates").is_array()) {
    return Error(Status::InvalidArgument("updates must be a list"));
  }
  // All or nothing: the write side decides every update against the same state and writes all
  // of them or none (commands::UpdateJobs).
  commands::UpdateJobs change;
  std::vector<Status> errors;
  const json& entries = body->at("updates");
  for (size_t i = 0; i < entries.size(); ++i) {
    auto update = ParseJobUpdate(entries[i], "updates[" + std::to_string(i) + "]",
                                 JobUpdateShape::kQueueEntry);
    if (update.ok()) {
      change.updates.push_back(std::move(*update));
    } else {
      errors.push_back(update.status());
    }
  }
  if (!errors.empty()) return Error(commands::CombinedJobUpdateErrors(errors));
  auto outcome = call.Execute(std::move(change));
  if (!outcome.ok()) return Error(outcome.status());
  const std::optional<uint64_t> offset = outcome->offset;
  // Answer once the queue shows the change, so the caller's next read sees it. The updates are
  // durable either way: a slow projection only delays what reads show.
  if (offset) static_cast<void>(call.WaitFor(*offset));
  return Ok(json::object(), offset);
}

}  // namespace cairn::api
