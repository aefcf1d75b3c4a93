#include "tests/e2e/cluster_fixture.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "base/encoding.h"
#include "master/data_dir.h"
#include "net/session_login.h"

namespace cairn::testing {

std::string ExamplePath(const std::string& name) { return SourcePath("examples/" + name); }

std::string SourcePath(const std::string& relative) {
  return std::string(CAIRN_SOURCE_DIR) + "/" + relative;
}

json ModelDefinition(const std::string& directory) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(directory);
       it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && it->path().filename() == "__pycache__") {
      it.disable_recursion_pending();
    } else if (it->is_regular_file()) {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  json entries = json::array();
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    struct stat info {};
    EXPECT_EQ(stat(file.c_str(), &info), 0) << file;
    entries.push_back({{"path", fs::relative(file, directory).generic_string()},
                       {"type", 48},
                       {"content", Base64Encode(content.str())},
                       {"mode", info.st_mode & 0777},
                       {"uid", 0},
                       {"gid", 0}});
  }
  return entries;
}

Cluster::Cluster(std::string extra_master_config)
    : data_dir_(dir_.Sub("data")), extra_master_config_(std::move(extra_master_config)) {}

Cluster::~Cluster() {
  for (auto& agent : agents_) agent->Signal(SIGTERM);
  for (auto& agent : agents_) (void)agent->Wait(std::chrono::seconds(20));
  if (master_) master_->Signal(SIGTERM);
}

void Cluster::ServeHttps() {
  const std::string directory = dir_.Sub("tls");
  std::filesystem::create_directories(directory);
  auto made = MakeTestCertificates(directory);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  certificates_ = *made;
}

void Cluster::StartMaster(const std::vector<std::string>& extra_env, bool with_stderr) {
  std::string config_path = dir_.Sub("master.yaml");
  {
    std::ofstream out(config_path);
    out << "port: " << port_ << "\ndata_dir: " << data_dir_ << "\nagent_timeout_seconds: 30\n"
        << extra_master_config_;
    out << "security:\n  authz:\n    type: " << authz_ << "\n";
    if (!certificates_.ca_file.empty()) {
      out << "  tls:\n    cert: " << certificates_.cert_file
          << "\n    key: " << certificates_.key_file << "\n";
    }
  }
  auto master = ChildProcess::Start({BinaryPath("cairn-master"), "--config", config_path},
                                    extra_env, with_stderr);
  ASSERT_TRUE(master.ok()) << master.status().ToString();
  master_ = std::move(*master);
  auto line = master_->WaitForLine(
      [](const std::string& l) { return l.find("cairn-master listening on") == 0; },
      std::chrono::seconds(60));
  ASSERT_TRUE(line.ok()) << "master did not start: " << line.status().ToString();
  ASSERT_NE(line->find(certificates_.ca_file.empty() ? " http://" : " https://"), std::string::npos)
      << "the master announces the scheme it serves: " << *line;
  port_ = static_cast<uint16_t>(std::stoi(line->substr(line->rfind(':') + 1)));
  auto client = net::Client::FromUrl(url(), certificates_.ca_file);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto token = net::LogIn(*client, "determined");
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  token_ = *token;
}

net::Client Cluster::Client() const {
  net::Client client("127.0.0.1", port_,
                     net::ClientOptions{!certificates_.ca_file.empty(), certificates_.ca_file});
  client.SetDefaultHeader("Authorization", "Bearer " + token_);
  if (std::string seen = SeenOffset(); !seen.empty())
    client.SetDefaultHeader("Cairn-Min-Offset", seen);
  return client;
}

std::string Cluster::SeenOffset() const {
  const uint64_t end = seen_end_.load();
  return end == 0 ? "" : std::to_string(end - 1);
}

void Cluster::NoteSeen(const json& event) {
  if (!event.is_object() || !event.contains("offset")) return;
  const uint64_t next = std::stoull(event["offset"].get<std::string>()) + 1;
  uint64_t seen = seen_end_.load();
  while (next > seen && !seen_end_.compare_exchange_weak(seen, next)) {
  }
}

void Cluster::StopMaster(int signal_number) {
  master_->Signal(signal_number);
  auto status = master_->Wait(std::chrono::seconds(30));
  ASSERT_TRUE(status.ok());
  if (signal_number == SIGTERM) {
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "clean stop on SIGTERM";
  }
  master_.reset();
}

void Cluster::StartAgent(const std::string& id, int slots,
                         const std::vector<std::string>& extra_args,
                         const std::vector<std::string>& extra_env) {
  std::vector<std::string> argv = {BinaryPath("cairn-agent"),
                                   "--master",
                                   url(),
                                   "--id",
                                   id,
                                   "--slots",
                                   std::to_string(slots),
                                   "--work-root",
                                   dir_.Sub("agent-" + id),
                                   "--kill-grace",
                                   "5",
                                   "--heartbeat-interval",
                                   "1",
                                   "--agent-token-file",
                                   AgentTokenPath(data_dir_)};
  if (!certificates_.ca_file.empty()) {
    argv.insert(argv.end(), {"--security-tls-master-cert", certificates_.ca_file});
  }
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  auto agent = ChildProcess::Start(argv, extra_env);
  ASSERT_TRUE(agent.ok()) << agent.status().ToString();
  auto line = (*agent)->WaitForLine(
      [&](const std::string& l) { return l.find("cairn-agent " + id + " registered") == 0; },
      std::chrono::seconds(30));
  ASSERT_TRUE(line.ok()) << "agent did not register: " << line.status().ToString();
  agents_.push_back(std::move(*agent));
}

std::string Cluster::Submit(const json& config) {
  auto client = Client();
  auto response = client.Request("POST", "/api/v1/commands", json{{"config", config}}.dump());
  EXPECT_TRUE(response.ok() && response->status == 200)
      << (response.ok() ? response->body : response.status().ToString());
  if (!response.ok() || response->status != 200) return "";
  return json::parse(response->body)["command"]["id"];
}

json Cluster::Get(const std::string& target) {
  auto client = Client();
  auto response = client.Request("GET", target);
  EXPECT_TRUE(response.ok() && response->status == 200)
      << target << ": " << (response.ok() ? response->body : response.status().ToString());
  if (!response.ok()) return json();
  return json::parse(response->body, nullptr, false);
}

std::vector<json> Cluster::FollowLogLines(const std::string& task_id) {
  std::vector<json> lines;
  auto client = Client();
  auto status = client.StreamLines("GET", "/api/v1/tasks/" + task_id + "/logs?follow=true",
                                   [&](std::string_view line) {
                                     if (!line.empty())
                                       lines.push_back(json::parse(line)["result"]);
                                     return true;
                                   });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return lines;
}

std::string Cluster::FollowLogs(const std::string& task_id) {
  std::string text;
  for (const auto& line : FollowLogLines(task_id)) {
    if (line["source"] == "task") text += line["message"].get<std::string>();
  }
  return text;
}

json Cluster::WaitForEvent(const std::function<bool(const json&)>& predicate) {
  json found;
  auto client = Client();
  auto status =
      client.StreamLines("GET", "/api/v1/events?from=0&follow=true", [&](std::string_view line) {
        if (line.empty()) return true;  // a keep-alive line
        json event = json::parse(line);
        NoteSeen(event);
        if (!predicate(event)) return true;
        found = event;
        return false;
      });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return found;
}

std::vector<json> Cluster::AllEvents() {
  std::vector<json> events;
  auto client = Client();
  auto status = client.StreamLines("GET", "/api/v1/events?from=0", [&](std::string_view line) {
    events.push_back(json::parse(line));
    NoteSeen(events.back());
    return true;
  });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return events;
}

std::vector<json> Cluster::FollowEventsUntil(
    const std::function<bool(const std::vector<json>&)>& done, std::chrono::milliseconds timeout) {
  std::vector<json> events;
  bool satisfied = false;
  auto client = Client();
  // A watchdog cancels the stream at the deadline; Cancel() does not stick to a call that has
  // not started yet, so it repeats until the stream returns.
  std::mutex mutex;
  std::condition_variable returned;
  bool finished = false;
  bool timed_out = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mutex);
    if (returned.wait_for(lock, timeout, [&] { return finished; })) return;
    timed_out = true;
    while (!returned.wait_for(lock, std::chrono::milliseconds(50), [&] { return finished; })) {
      client.Cancel();
    }
  });
  auto status =
      client.StreamLines("GET", "/api/v1/events?from=0&follow=true", [&](std::string_view line) {
        if (line.empty()) return true;  // a keep-alive line
        events.push_back(json::parse(line));
        NoteSeen(events.back());
        satisfied = done(events);
        return !satisfied;
      });
  {
    std::lock_guard lock(mutex);
    finished = true;
  }
  returned.notify_all();
  watchdog.join();
  EXPECT_TRUE(satisfied) << (timed_out ? "the condition did not hold within the deadline"
                                       : "the event stream ended: " + status.ToString())
                         << " (" << events.size() << " events read)";
  return events;
}

Reply Cluster::Call(const std::string& method, const std::string& target, const json& body) {
  auto client = Client();
  auto response = client.Request(method, target, body.is_null() ? "" : body.dump(),
                                 {{"Content-Type", "application/json"}});
  EXPECT_TRUE(response.ok()) << method << " " << target << ": " << response.status().ToString();
  if (!response.ok()) return {};
  return {response->status, json::parse(response->body, nullptr, false)};
}

Reply Cluster::CreateExperiment(const std::string& config_yaml,
                                const std::string& context_directory, bool activate) {
  return Call("POST", "/api/v1/experiments",
              {{"config", config_yaml},
               {"modelDefinition", ModelDefinition(context_directory)},
               {"activate", activate},
               {"parentId", nullptr},
               {"projectId", nullptr},
               {"template", nullptr},
               {"validateOnly", false}});
}

void Cluster::ExpectRebuiltProjectionsEqualLive() {
  StopMaster(SIGTERM);
  auto live = RunCairn({"replay", "digest", "--data", data_dir()});
  auto rebuilt =
      RunCairn({"replay", "rebuild", "--data", data_dir(), "--out", dir().Sub("rebuilt")});
  auto projection_lines = [](const std::vector<std::string>& lines) {
    std::vector<std::string> kept;
    for (const auto& line : lines) {
      for (const char* name : {"tasks ", "agents ", "job_queue ", "experiments "}) {
        if (line.rfind(name, 0) == 0) kept.push_back(line);
      }
    }
    return kept;
  };
  ASSERT_EQ(projection_lines(live).size(), 4u);
  EXPECT_EQ(projection_lines(live), projection_lines(rebuilt))
      << "a rebuilt projection must be byte-identical to the live one";
}

std::vector<std::string> Cluster::RunCairn(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BinaryPath("cairn")};
  argv.insert(argv.end(), args.begin(), args.end());
  auto tool = ChildProcess::Start(argv);
  EXPECT_TRUE(tool.ok());
  if (!tool.ok()) return {};
  auto status = (*tool)->Wait(std::chrono::seconds(60));
  EXPECT_TRUE(status.ok() && WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << "cairn " << args[0] << " " << args[1] << " failed";
  (void)(*tool)->WaitForLine([](const std::string&) { return false; }, std::chrono::seconds(5));
  return (*tool)->Lines();
}

}  // namespace cairn::testing
