// What checking a request's credentials costs, against what a request costs: issue 11 asks that
// authentication add under 5% to REST submit throughput. In one run, on this machine:
//   1. the per-request check, exactly as Call::Admit does it (parse the bearer header, SHA-256
//      the token, look the session up in the writer's in-memory identity), timed over 200,000
//      calls with 1 and with 10,000 live sessions;
//   2. the per-command authorization (commands/tenancy/tenancy_decider.h AuthorizeCommand, as the
//      decider runs it before a submission) plus the edge's read check (TenancyState::Allows),
//      with 10,000 users, 1,000 workspaces and a role for every user in ten of them;
//   3. REST submissions through an in-process master (8 keep-alive clients, every request
//      authenticated), for the throughput and mean latency a check is compared with.
// Prints both and the ratio: check CPU per request / mean request latency, and check CPU at the
// measured throughput as a share of the machine's cores.
//   build/bin/bench_auth
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "api/auth.h"
#include "base/clock.h"
#include "base/password.h"
#include "commands/decision_state.h"
#include "commands/identity/identity.h"
#include "commands/tenancy/tenancy_decider.h"
#include "events/event_log.h"
#include "master/decision_loop.h"
#include "master/master.h"
#include "net/http_client.h"
#include "net/session_login.h"

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "bench_auth: %s\n", what.c_str());
  return 1;
}

// Microseconds per check with `sessions` live sessions, or a negative number on failure.
double CheckMicros(const std::string& dir, int sessions) {
  cairn::LogConfig config;
  config.data_dir = dir;
  auto log = cairn::OpenEventLog(config);
  if (!log.ok()) return -1;
  cairn::DecisionLoop loop(log->get(), {});
  if (!loop.Start().ok()) return -1;
  cairn::commands::CommandMeta meta{"system:bench", "bench", "", cairn::NowUnixMicros()};
  auto hash = cairn::HashPassword(cairn::CliPasswordHash("pw"));
  if (!hash.ok()) return -1;
  if (!loop.Execute(cairn::commands::CreateUser{"bench", "", false, true, *hash}, meta).ok()) {
    return -1;
  }
  auto user = loop.FindUser("bench");
  if (!user) return -1;
  std::vector<std::string> tokens;
  for (int i = 0; i < sessions; ++i) {
    tokens.push_back(cairn::NewSessionToken());
    cairn::commands::StartSession start;
    start.user_id = user->id;
    start.token_sha256 = cairn::SessionTokenSha256(tokens.back());
    start.checked_password_hash = *hash;
    start.expires_unix_micros = cairn::NowUnixMicros() + int64_t{3600} * 1'000'000;
    if (!loop.Execute(start, meta).ok()) return -1;
  }
  const std::string header = "Bearer " + tokens.back();
  constexpr int kChecks = 200000;
  const auto start = Clock::now();
  int admitted = 0;
  for (int i = 0; i < kChecks; ++i) {
    auto token = cairn::api::BearerToken(header);
    if (!token.ok()) continue;
    auto record = loop.Authenticate(cairn::SessionTokenSha256(*token), cairn::NowUnixMicros());
    admitted += record.ok() ? 1 : 0;
  }
  const double micros = SecondsSince(start) * 1e6 / kChecks;
  loop.Stop();
  return admitted == kChecks ? micros : -1;
}

// Microseconds per authorization of a submission by an Editor, or negative on failure.
double AuthorizeMicros() {
  cairn::commands::DecisionState state;
  constexpr int kUsers = 10000;
  constexpr int kWorkspaces = 1000;
  for (int id = 1; id <= kUsers; ++id) {
    state.identity.users[id] = {id, "u" + std::to_string(id), "", false, true, ""};
    state.identity.user_ids["u" + std::to_string(id)] = id;
  }
  for (int w = 2; w <= kWorkspaces; ++w) {
    cairn::events::Envelope event;
    event.mutable_workspace_created()->set_workspace_id(w);
    event.mutable_workspace_created()->set_name("team-" + std::to_string(w));
    cairn::commands::ApplyTenancy(state.tenancy, event);
  }
  for (int id = 1; id <= kUsers; ++id) {
    for (int k = 0; k < 10; ++k) {
      state.tenancy.roles[{id, 2 + (id * 7 + k * 97) % (kWorkspaces - 1)}] =
          cairn::events::ROLE_EDITOR;
    }
  }
  const int32_t workspace = 2 + (1234 * 7) % (kWorkspaces - 1);
  cairn::commands::SubmitTask submit;
  submit.task_id = "bench";
  submit.workspace_id = workspace;
  const cairn::commands::Command command = submit;
  const cairn::commands::CommandMeta meta{"user:u1234", "bench", "", 1};
  const cairn::commands::UserRecord& user = state.identity.users.at(1234);
  constexpr int kChecks = 200000;
  int allowed = 0;
  const auto start = Clock::now();
  for (int i = 0; i < kChecks; ++i) {
    allowed +=
        cairn::commands::AuthorizeCommand(state, command, meta).ok() &&
                state.tenancy.Allows(user, cairn::commands::Permission::kViewWorkspace, workspace)
            ? 1
            : 0;
  }
  const double micros = SecondsSince(start) * 1e6 / kChecks;
  return allowed == kChecks ? micros : -1;
}

}  // namespace

int main() {
  const std::string root =
      (std::filesystem::temp_directory_path() / ("cairn-bench-auth-" + std::to_string(getpid())))
          .string();
  std::filesystem::remove_all(root);
  const double one = CheckMicros(root + "/one", 1);
  const double many = CheckMicros(root + "/many", 10000);
  if (one < 0 || many < 0) return Fail("the check failed");
  const double authorize = AuthorizeMicros();
  if (authorize < 0) return Fail("the authorization failed");

  cairn::MasterConfig config;
  config.data_dir = root + "/master";
  config.log.data_dir = config.data_dir;
  auto master = cairn::Master::Start(config);
  if (!master.ok()) return Fail(master.status().ToString());
  constexpr int kClients = 8;
  constexpr int kPerClient = 500;
  std::vector<cairn::net::Client> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back("127.0.0.1", (*master)->port());
    if (!cairn::net::LogIn(clients.back(), "determined").ok()) return Fail("login failed");
  }
  const std::string body = R"({"config":{"entrypoint":["true"]},"force":true})";
  std::atomic<int> failures{0};
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      for (int i = 0; i < kPerClient; ++i) {
        auto response = clients[c].Request("POST", "/api/v1/commands", body);
        if (!response.ok() || response->status != 200) failures++;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const double seconds = SecondsSince(start);
  (*master)->Stop();
  std::filesystem::remove_all(root);
  if (failures > 0) return Fail(std::to_string(failures.load()) + " submissions failed");

  const double throughput = kClients * kPerClient / seconds;
  const double latency_micros = seconds * 1e6 * kClients / (kClients * kPerClient);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf(
      "auth: machine %u cores\n"
      "  per-request check (bearer parse, SHA-256, in-memory session lookup): %.2f us with 1 "
      "session, %.2f us with 10,000 sessions\n"
      "  per-command authorization + read check (10,000 users, 1,000 workspaces, 100,000 "
      "roles): %.2f us\n"
      "  REST submissions, %d clients x %d, every request authenticated: %.0f/s, mean latency "
      "%.0f us\n"
      "  both checks' share: %.2f%% of a request's latency; %.2f%% of the machine's CPU at that "
      "throughput (target < 5%%)\n",
      cores, one, many, authorize, kClients, kPerClient, throughput, latency_micros,
      100.0 * (many + authorize) / latency_micros,
      100.0 * (many + authorize) * throughput / 1e6 / cores);
  return 0;
}
