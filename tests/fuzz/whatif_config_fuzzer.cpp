// Fuzz target: the configuration `cairn replay whatif --config` reads (replay/whatif_config.h):
// a master.yaml's pools, through the master's own parser, and `whatif.jobs`. A configuration it
// accepts must be one the simulation can run under: every pool's scheduler resolved, both default
// pools configured, every job rule within the ranges the decider takes.
#include <string>

#include "replay/whatif_config.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = cairn::replay::ParseWhatIfConfig(text, "whatif.yaml");
  if (!config.ok()) return 0;
  bool compute = false;
  bool aux = false;
  for (const auto& pool : config->pools.pools()) {
    FUZZ_CHECK(pool.scheduler().type() != cairn::events::SCHEDULER_TYPE_UNSPECIFIED);
    compute |= pool.pool_name() == config->pools.default_compute_pool();
    aux |= pool.pool_name() == config->pools.default_aux_pool();
  }
  FUZZ_CHECK(compute && aux);
  for (const auto& rule : config->job_rules) {
    FUZZ_CHECK(rule.priority || rule.weight);
    FUZZ_CHECK(!rule.priority || (*rule.priority >= 1 && *rule.priority <= 99));
    FUZZ_CHECK(!rule.weight || *rule.weight > 0);
  }
  return 0;
}
