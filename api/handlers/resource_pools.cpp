#include "api/handlers/resource_pools.h"

#include "api/render/pool_json.h"

namespace cairn::api {

using nlohmann::json;

net::Response ListResourcePools(Call& call) {
  auto pools = call.services().projections->ListPools();
  if (!pools.ok()) return Error(pools.status());
  json list = json::array();
  for (const auto& pool : *pools) {
    list.push_back(PoolJson(pool, call.services().facts.cluster_name));
  }
  return Ok({{"resourcePools", list},
             {"pagination", {{"endIndex", list.size()}, {"total", list.size()}}}});
}

}  // namespace cairn::api
