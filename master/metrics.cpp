#include "master/metrics.h"

#include "base/memory.h"
#include "base/metrics.h"

namespace cairn {

std::string RenderMasterMetrics(const DecisionLoop& writer, Projections& projections, EventLog& log,
                                int64_t now_unix_micros) {
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
      queued[name] = 0;
    }
  }
  // The pools' counts only: reading the queue itself would cost the scrape O(queue).
  if (auto lengths = projections.JobQueueLengths(); lengths.ok()) {
    for (const auto& [name, count] : *lengths) queued[name] = static_cast<double>(count);
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

  ProcessMemory process = MeasureProcessMemory();
  auto storage = projections.MeasureMemory();
  std::map<std::string, double> memory{
      {"resident", static_cast<double>(process.resident_bytes)},
      {"rocksdb_memtables", static_cast<double>(storage.memtable_bytes)},
      {"rocksdb_block_cache", static_cast<double>(storage.block_cache_bytes)},
      {"rocksdb_table_readers", static_cast<double>(storage.table_reader_bytes)}};
  if (process.heap_resident_bytes > 0) {
    memory["heap_allocated"] = static_cast<double>(process.heap_allocated_bytes);
    memory["heap_resident"] = static_cast<double>(process.heap_resident_bytes);
  }
  RenderFamily(out, "cairn_memory_bytes", "gauge",
               "The master's memory: resident (the kernel's count); heap_allocated and "
               "heap_resident (jemalloc's: in use, and held); RocksDB's memtables, shared block "
               "cache and table readers (all within the heap).",
               "part", memory);
  return out;
}

}  // namespace cairn
