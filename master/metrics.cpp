#include "master/metrics.h"

#include "base/metrics.h"

namespace cairn {

std::string RenderMasterMetrics(const commands::DecisionLoop& writer, Projections& projections,
                                EventLog& log, int64_t now_unix_micros) {
  using metrics::RenderFamily;
  using metrics::RenderValue;
  std::string out;
  const auto& measured = writer.metrics();
  measured.follow_ups.Render(out, "cairn_scheduling_round_seconds",
                             "A write batch's follow-ups: experiment reactions, then one "
                             "scheduling pass.");
  measured.append.Render(out, "cairn_log_append_seconds",
                         "A write batch's durable append to the event log.");
  RenderValue(out, "cairn_events_appended_total", "counter",
              "Events this master appended (rate() gives events/s).",
              static_cast<double>(measured.events_appended.load()));

  auto end = log.EndOffset();
  if (end.ok()) {
    RenderValue(out, "cairn_log_end_offset", "gauge", "The offset the next event gets.",
                static_cast<double>(*end));
    std::map<std::string, double> lag;
    for (const auto& [name, next] : projections.ProjectionOffsets()) {
      lag[name] = static_cast<double>(*end > next ? *end - next : 0);
    }
    RenderFamily(out, "cairn_projection_lag_events", "gauge",
                 "Events in the log that the projection has not applied yet.", "projection", lag);
  }
  if (auto snapshot = projections.LatestSnapshot()) {
    RenderValue(out, "cairn_snapshot_offset", "gauge",
                "Every event below it is in the newest snapshot.",
                static_cast<double>(snapshot->next_offset));
    if (snapshot->published_unix_micros > 0) {
      RenderValue(out, "cairn_snapshot_age_seconds", "gauge",
                  "Seconds since the newest snapshot was published.",
                  static_cast<double>(now_unix_micros - snapshot->published_unix_micros) / 1e6);
    }
  }

  std::map<std::string, double> queued, slots, used_slots;
  if (auto pools = projections.ListPools(); pools.ok()) {
    for (const auto& pool : *pools) {
      const std::string& name = pool.config().pool_name();
      slots[name] = pool.usage().slots();
      used_slots[name] = pool.usage().used_slots();
      if (auto page = projections.JobQueuePage(name, 0, 0, false); page.ok()) {
        queued[name] = static_cast<double>(page->total);
      }
    }
  }
  RenderFamily(out, "cairn_job_queue_jobs", "gauge",
               "Jobs in the pool's queue (queued or running).", "pool", queued);
  RenderFamily(out, "cairn_slots", "gauge", "Slots of the pool's connected agents.", "pool", slots);
  RenderFamily(out, "cairn_slots_used", "gauge", "Slots of the pool that run work.", "pool",
               used_slots);
  std::map<std::string, double> agents{
      {"connected", 0}, {"disconnected", 0}, {"disabled", 0}, {"draining", 0}};
  if (auto listed = projections.ListAgents(); listed.ok()) {
    for (const auto& agent : *listed) {
      if (!agent.connected()) {
        ++agents["disconnected"];
      } else if (!agent.enabled()) {
        ++agents[agent.draining() ? "draining" : "disabled"];
      } else {
        ++agents["connected"];
      }
    }
  }
  RenderFamily(out, "cairn_agents", "gauge", "Agents by state.", "state", agents);
  return out;
}

}  // namespace cairn
