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
             {"rbac_enabled", false},
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
             {"rbacEnabled", false},
             {"product", "PRODUCT_UNSPECIFIED"},
             {"cairn",
              {{"version", kCairnVersion},
               {"log", services.log->Describe()},
               {"writerEpoch", services.writer->writer_epoch()},
               {"appliedOffset", std::to_string(services.projections->AppliedOffset())}}}});
}

http::Response Workspaces(Call&) {
  json workspace = {{"id", 1},
                    {"name", "Uncategorized"},
                    {"archived", false},
                    {"errorMessage", ""},
                    {"immutable", true},
                    {"numExperiments", 0},
                    {"numProjects", 1},
                    {"pinned", false},
                    {"state", "WORKSPACE_STATE_UNSPECIFIED"},
                    {"userId", 1},
                    {"username", "admin"}};
  return Ok(
      {{"workspaces", json::array({workspace})}, {"pagination", {{"endIndex", 1}, {"total", 1}}}});
}

}  // namespace cairn::api
