// The REST API tests' fixture: a real master (embedded log, RocksDB projections, HTTP on
// loopback) in a temporary directory, and a client with helpers for the calls the tests repeat.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "api/route_table.h"
#include "api/router.h"
#include "base/files.h"
#include "base/password.h"
#include "master/master.h"
#include "net/http_client.h"
#include "tests/support/test_support.h"

namespace cairn::api_testing {

using nlohmann::json;

// One pool's settings, as a master configuration resolves them.
inline events::ResourcePoolConfig Pool(const std::string& name, events::SchedulerType type,
                                       bool preemption = false,
                                       events::FittingPolicy fitting = events::FITTING_POLICY_BEST,
                                       const std::string& description = "",
                                       int aux_per_agent = 100) {
  events::ResourcePoolConfig pool;
  pool.set_pool_name(name);
  pool.set_description(description);
  pool.mutable_scheduler()->set_type(type);
  pool.mutable_scheduler()->set_fitting_policy(fitting);
  pool.mutable_scheduler()->set_preemption(preemption);
  pool.mutable_scheduler()->set_default_priority(42);
  pool.set_max_aux_containers_per_agent(aux_per_agent);
  return pool;
}

inline events::ResourcePoolsConfigured Pools(const std::vector<events::ResourcePoolConfig>& pools,
                                             const std::string& compute, const std::string& aux) {
  events::ResourcePoolsConfigured config;
  for (const auto& pool : pools) *config.add_pools() = pool;
  config.set_default_compute_pool(compute);
  config.set_default_aux_pool(aux);
  config.set_source("api_test");
  config.set_preemption_grace_seconds(30);
  return config;
}

// One pool "default" under the priority scheduler: the queue is ordered by priority.
inline events::ResourcePoolsConfigured PriorityPool() {
  return Pools({Pool("default", events::SCHEDULER_TYPE_PRIORITY)}, "default", "default");
}

// The bearer token a test presents for a request, by the route table's rule for its route: the
// agent token for the agent protocol, the allocation's own token for the harness's routes, and
// `user_token` (a session; "" = none) for everything else.
inline std::string TokenForRoute(const std::string& method, const std::string& target,
                                 const std::string& user_token, const std::string& agent_token) {
  static const api::Router router = *api::Router::Build(api::RouteTable());
  api::Router::Found found = router.Find(method, target);
  if (found.route == nullptr) return user_token;
  switch (found.route->access) {
    case api::Access::kAgent:
      return agent_token;
    case api::Access::kAllocation:
      return AllocationToken(agent_token, found.params["id"]);
    default:
      return user_token;
  }
}

// The token the master made for agents in `data_dir` (it has none in its config).
inline std::string AgentTokenOf(const std::string& data_dir) {
  auto token = ReadTokenFile(AgentTokenPath(data_dir));
  EXPECT_TRUE(token.ok()) << token.status().ToString();
  return token.ok() ? *token : "";
}

// `det experiment create const.yaml ./ctx`: the YAML text verbatim and the context as tar-style
// entries, other keys as explicit nulls.
inline json CreateExperimentBody(bool activate) {
  // base64 of "from cairn_harness import Trial\nclass T(Trial):\n  pass\n"
  const std::string encoded =
      "ZnJvbSBjYWlybl9oYXJuZXNzIGltcG9ydCBUcmlhbApjbGFzcyBUKFRyaWFsKToKICBwYXNzCg==";
  return {{"activate", activate},
          {"config",
           "name: shapes\nentrypoint: model_def:T\nhyperparameters:\n  lr: 0.1\n"
           "searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 100}\n"},
          {"modelDefinition", json::array({{{"path", "model_def.py"},
                                            {"type", 48},
                                            {"content", encoded},
                                            {"mode", 33188},
                                            {"mtime", "1700000000"},
                                            {"uid", 0},
                                            {"gid", 0}}})},
          {"parentId", nullptr},
          {"projectId", nullptr},
          {"template", nullptr},
          {"validateOnly", false}};
}

// The headers of a WebSocket upgrade, without any credential.
inline const std::map<std::string, std::string>& AnonymousWebSocketUpgrade() {
  static const std::map<std::string, std::string> headers = {
      {"Upgrade", "websocket"},
      {"Connection", "Upgrade"},
      {"Sec-WebSocket-Version", "13"},
      {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="},
      {"Authorization", ""}};
  return headers;
}

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override { StartMaster(); }

  // Starts a master on `data` (a fresh directory unless a test restarts on the same one), with
  // `pools` as its resource pools when given.
  void StartMaster(std::optional<events::ResourcePoolsConfigured> pools = std::nullopt,
                   const std::string& data = "data") {
    client_.reset();
    master_.reset();
    MasterConfig config;
    config.port = 0;
    config.data_dir = dir_.Sub(data);
    config.log.data_dir = config.data_dir;
    config.max_request_body_bytes = 64 * 1024;
    // These tests check roles; the master's own default is basic (tests/api/basic_authz_test.cpp).
    config.security.authz = authz_;
    // The master records its pools (ResourcePoolsConfigured) as it starts.
    if (pools) config.pools = *pools;
    if (configure_) configure_(config);
    auto master = Master::Start(config);
    ASSERT_TRUE(master.ok()) << master.status().ToString();
    master_ = std::move(*master);
    client_ = std::make_unique<net::Client>("127.0.0.1", master_->port());
    agent_token_ = AgentTokenOf(config.data_dir);
    // Calls act as Determined's default user unless a test logs in as another or clears token_.
    LoginAs("determined");
  }

  // Another connection, presenting the test's session (for streams).
  net::Client LoggedInClient() const {
    net::Client client("127.0.0.1", master_->port());
    client.SetDefaultHeader("Authorization", token_.empty() ? "" : "Bearer " + token_);
    return client;
  }

  net::ClientResponse Call(const std::string& method, const std::string& target,
                           const std::string& body = "",
                           std::map<std::string, std::string> headers = {}) {
    if (!headers.count("Authorization")) {
      const std::string token = TokenForRoute(method, target, token_, agent_token_);
      if (!token.empty()) headers["Authorization"] = "Bearer " + token;
    }
    auto response = client_->Request(method, target, body, headers);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : net::ClientResponse{};
  }

  json CallJson(const std::string& method, const std::string& target, const std::string& body = "",
                int expected_status = 200) {
    auto response = Call(method, target, body);
    EXPECT_EQ(response.status, expected_status) << method << " " << target << ": " << response.body;
    return json::parse(response.body, nullptr, false);
  }

  // Later calls act as `user` (Determined's built-ins have blank passwords).
  void LoginAs(const std::string& user) {
    token_.clear();
    json login = CallJson("POST", "/api/v1/auth/login",
                          json{{"username", user}, {"password", ""}, {"isHashed", true}}.dump());
    token_ = login["token"];
  }

  // Every event so far, as the agent reads them.
  std::vector<json> Events() { return EventsAs(agent_token_); }

  // The events so far as the caller presenting `token` reads them.
  std::vector<json> EventsAs(const std::string& token) {
    std::vector<json> events;
    net::Client streamer("127.0.0.1", master_->port());
    auto status = streamer.StreamLines("GET", "/api/v1/events?from=0",
                                       [&](std::string_view line) {
                                         events.push_back(json::parse(line));
                                         return true;
                                       },
                                       {{"Authorization", "Bearer " + token}});
    EXPECT_TRUE(status.ok()) << status.ToString();
    return events;
  }

  std::string Submit(const json& config, const std::string& extra = "") {
    json body = json{{"config", config}};
    if (!extra.empty()) body = json::parse(extra);
    auto reply = CallJson("POST", "/api/v1/commands", body.dump());
    return reply["command"]["id"].get<std::string>();
  }

  // A command queued whatever the pool's capacity.
  std::string SubmitForced(const json& config) {
    auto reply =
        CallJson("POST", "/api/v1/commands", json{{"config", config}, {"force", true}}.dump());
    return reply["command"]["id"].get<std::string>();
  }

  json RegisterAgent(const std::string& id, int slots, const std::string& incarnation,
                     const std::string& pool = "") {
    json body = {{"incarnation", incarnation}, {"slots", slots}, {"hostname", "h"}};
    if (!pool.empty()) body["resourcePool"] = pool;
    return CallJson("POST", "/api/v1/agents/" + id + "/register", body.dump());
  }

  // An agent whose slots count as the pool's capacity but take no work: what is submitted
  // stays queued.
  void RegisterDisabledAgent(const std::string& id, int slots) {
    RegisterAgent(id, slots, "inc-" + id);
    const std::string caller = token_;
    LoginAs("admin");  // only cluster admins enable and disable agents
    CallJson("POST", "/api/v1/agents/" + id + "/disable");
    token_ = caller;
  }

  std::vector<std::string> QueueOrder(const std::string& query = "") {
    json queue = CallJson("GET", "/api/v1/job-queues-v2" + query);
    std::vector<std::string> ids;
    for (const auto& job : queue["jobs"]) ids.push_back(job["full"]["jobId"]);
    return ids;
  }

  json Job(const std::string& job_id) {
    json queue = CallJson("GET", "/api/v1/job-queues-v2");
    for (const auto& job : queue["jobs"]) {
      if (job["full"]["jobId"] == job_id) return job["full"];
    }
    ADD_FAILURE() << "job " << job_id << " is not in the queue: " << queue.dump();
    return json::object();
  }

  std::vector<json> EventsOfType(const std::string& key) {
    std::vector<json> found;
    for (const auto& event : Events()) {
      if (event.contains(key)) found.push_back(event);
    }
    return found;
  }

  testing::TempDir dir_;
  std::unique_ptr<Master> master_;
  events::AuthzType authz_ = events::AUTHZ_TYPE_RBAC;  // security.authz.type of StartMaster
  std::function<void(MasterConfig&)> configure_;       // more of StartMaster's configuration
  std::unique_ptr<net::Client> client_;
  std::string token_;        // the session calls present (LoginAs)
  std::string agent_token_;  // the master's (<data dir>/agent-token)
};

}  // namespace cairn::api_testing
