#include "api/handlers/master.h"

namespace cairn::api {

using nlohmann::json;

http::Response Info(Call& call) {
  const MasterFacts& facts = call.services().facts;
  return Ok({{"version", kDeterminedApiVersion},
             {"master_id", facts.master_id},
             {"cluster_id", facts.cluster_name},
             {"cluster_name", facts.cluster_name},
             {"telemetry", {{"enabled", false}}},
             {"sso_providers", json::array()},
             {"rbac_enabled", true},
             {"cairn_version", kCairnVersion}});
}

http::Response MasterInfo(Call& call) {
  const Services& services = call.services();
  const MasterFacts& facts = services.facts;
  return Ok({{"version", kDeterminedApiVersion},
             {"masterId", facts.master_id},
             {"clusterId", facts.cluster_name},
             {"clusterName", facts.cluster_name},
             {"strictJobQueueControl", false},
             {"hasCustomLogo", false},
             {"telemetryEnabled", false},
             {"rbacEnabled", true},
             {"product", "PRODUCT_UNSPECIFIED"},
             {"cairn",
              {{"version", kCairnVersion},
               {"log", services.log->Describe()},
               {"writerEpoch", services.writer->writer_epoch()},
               {"appliedOffset", std::to_string(services.projections->AppliedOffset())}}}});
}

}  // namespace cairn::api
