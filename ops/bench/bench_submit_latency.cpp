// Submit-to-agent latency: from the moment a client sends POST /api/v1/commands to the moment
// the agent process has the placement order in hand (its --trace-file records that instant).
// Real cairn-master and cairn-agent processes on loopback; 1,000 sequential submissions of
// `true`; on the embedded log and on Kafka (librdkafka's mock cluster, in this process). The
// agent has more artificial slots than there are submissions, so every placement is decided at
// once and the figure measures delivery, not waiting for a free slot.
// Targets on a 2-core machine: p99 <= 10 ms embedded, <= 50 ms Kafka.
//   build/bin/bench_submit_latency [--count N] [--mode embedded|kafka|both]
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/clock.h"
#include "events/envelope_util.h"
#include "master/data_dir.h"
#include "net/http_client.h"
#include "net/session_login.h"
#include "tests/events_kafka/mock_cluster.h"
#include "tests/support/test_support.h"

using cairn::testing::BinaryPath;
using cairn::testing::ChildProcess;
using nlohmann::json;

namespace {

struct Figures {
  double p50 = 0, p99 = 0, max = 0, mean = 0;
  size_t samples = 0;
  // Where the time goes: request sent -> placement decided (the event's recorded time), and
  // decided -> the agent holds the order.
  double decide_p50 = 0, decide_p99 = 0, deliver_p50 = 0, deliver_p99 = 0;
};

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(p * (values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

int Fail(const std::string& why) {
  std::fprintf(stderr, "bench_submit_latency: %s\n", why.c_str());
  return 1;
}

int Run(const std::string& mode, int count, Figures* figures) {
  cairn::testing::TempDir dir;
  std::unique_ptr<cairn::testing::MockKafkaCluster> kafka;
  std::string log_config;
  if (mode == "kafka") {
    auto started = cairn::testing::MockKafkaCluster::Start(3);
    if (!started.ok()) return Fail(started.status().ToString());
    kafka = std::move(*started);
    if (!kafka->CreateCairnTopics("cairn", 4).ok()) return Fail("cannot create topics");
    log_config =
        "log:\n  backend: kafka\n  brokers: " + kafka->bootstraps() + "\n  topic_prefix: cairn\n";
  }
  {
    std::ofstream config(dir.Sub("master.yaml"));
    config << "port: 0\ndata_dir: " << dir.Sub("data") << "\n" << log_config;
  }
  auto master =
      ChildProcess::Start({BinaryPath("cairn-master"), "--config", dir.Sub("master.yaml")});
  if (!master.ok()) return Fail(master.status().ToString());
  auto line = (*master)->WaitForLine(
      [](const std::string& l) { return l.rfind("cairn-master listening on", 0) == 0; },
      std::chrono::seconds(60));
  if (!line.ok()) return Fail("master did not start");
  std::string url = line->substr(line->rfind(' ') + 1);
  uint16_t port = static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  std::string trace = dir.Sub("trace");
  auto agent = ChildProcess::Start({BinaryPath("cairn-agent"), "--master", url, "--id", "bench",
                                    "--slots", std::to_string(count + 16), "--work-root",
                                    dir.Sub("work"), "--trace-file", trace, "--agent-token-file",
                                    cairn::AgentTokenPath(dir.Sub("data"))});
  if (!agent.ok()) return Fail(agent.status().ToString());
  if (!(*agent)
           ->WaitForLine(
               [](const std::string& l) { return l.find("registered") != std::string::npos; },
               std::chrono::seconds(60))
           .ok()) {
    return Fail("agent did not register");
  }
  cairn::net::Client client("127.0.0.1", port);
  if (!cairn::net::LogIn(client, "determined").ok()) return Fail("login failed");
  std::string body = R"({"config":{"entrypoint":["true"]}})";
  // Warm-up, until the agent holds the warm-up orders: the first order also pays for the
  // agent's consumer joining its group (Kafka: about 3 s on the mock).
  auto trace_lines = [&] {
    std::ifstream in(trace);
    size_t lines = 0;
    std::string line;
    while (std::getline(in, line)) ++lines;
    return lines;
  };
  for (int i = 0; i < 5; ++i) {
    auto response = client.Request("POST", "/api/v1/commands", body);
    if (!response.ok() || response->status != 200) return Fail("warm-up submission failed");
  }
  auto warm_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (trace_lines() < 5) {
    if (std::chrono::steady_clock::now() > warm_deadline)
      return Fail("warm-up orders never arrived");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::map<std::string, int64_t> sent;  // allocation id -> send time
  std::string last_id;
  for (int i = 0; i < count; ++i) {
    int64_t before = cairn::NowUnixMicros();
    auto response = client.Request("POST", "/api/v1/commands", body);
    if (!response.ok() || response->status != 200) return Fail("submission failed");
    last_id = json::parse(response->body)["command"]["id"];
    sent[last_id + ".1"] = before;
  }
  // Every order has reached the agent once the trace names the last one.
  std::map<std::string, int64_t> received;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (received.size() < sent.size() && std::chrono::steady_clock::now() < deadline) {
    received.clear();
    std::ifstream in(trace);
    std::string allocation;
    int64_t at;
    while (in >> allocation >> at) {
      if (sent.count(allocation)) received[allocation] = at;
    }
    if (received.size() < sent.size()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (received.size() < sent.size()) return Fail("not every placement reached the agent");
  std::map<std::string, int64_t> decided;  // allocation id -> AllocationAssigned time
  auto streamed = client.StreamLines("GET", "/api/v1/events?from=0&type=AllocationAssigned",
                                     [&](std::string_view line) {
                                       json event = json::parse(line);
                                       decided[event["allocationAssigned"]["allocationId"]] =
                                           std::stoll(event["timeUnixMicros"].get<std::string>());
                                       return true;
                                     });
  if (!streamed.ok()) return Fail("cannot read the events: " + streamed.ToString());
  std::vector<double> latencies, deciding, delivering;
  for (const auto& [allocation, at] : received) {
    latencies.push_back((at - sent[allocation]) / 1000.0);
    deciding.push_back((decided[allocation] - sent[allocation]) / 1000.0);
    delivering.push_back((at - decided[allocation]) / 1000.0);
  }
  figures->decide_p50 = Percentile(deciding, 0.5);
  figures->decide_p99 = Percentile(deciding, 0.99);
  figures->deliver_p50 = Percentile(delivering, 0.5);
  figures->deliver_p99 = Percentile(delivering, 0.99);
  figures->samples = latencies.size();
  figures->p50 = Percentile(latencies, 0.50);
  figures->p99 = Percentile(latencies, 0.99);
  figures->max = *std::max_element(latencies.begin(), latencies.end());
  double total = 0;
  for (double l : latencies) total += l;
  figures->mean = total / latencies.size();
  (*agent)->Signal(SIGTERM);
  (void)(*agent)->Wait(std::chrono::seconds(30));
  (*master)->Signal(SIGTERM);
  (void)(*master)->Wait(std::chrono::seconds(30));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 1000;
  std::string modes = "both";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--count" && i + 1 < argc) {
      count = std::stoi(argv[++i]);
    } else if (arg == "--mode" && i + 1 < argc) {
      modes = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: bench_submit_latency [--count N] [--mode embedded|kafka|both]\n");
      return 2;
    }
  }
  std::printf("machine: %ld cores\n", sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("submit-to-agent latency, %d sequential POST /api/v1/commands, real processes\n",
              count);
  std::printf("%-9s %8s %8s %8s %8s %8s %8s %s\n", "log", "samples", "p50 ms", "p99 ms", "max ms",
              "mean ms", "target", "p99/target");
  for (const std::string mode : {"embedded", "kafka"}) {
    if (modes != "both" && modes != mode) continue;
    Figures figures;
    if (Run(mode, count, &figures) != 0) return 1;
    double target = mode == "embedded" ? 10.0 : 50.0;
    std::printf("%-9s %8zu %8.2f %8.2f %8.2f %8.2f %8.0f %.2f %s\n", mode.c_str(), figures.samples,
                figures.p50, figures.p99, figures.max, figures.mean, target, figures.p99 / target,
                figures.p99 <= target ? "(meets target)" : "(MISSES target)");
    std::printf(
        "          sent->decided p50 %.2f p99 %.2f ms; decided->agent p50 %.2f p99 %.2f ms\n",
        figures.decide_p50, figures.decide_p99, figures.deliver_p50, figures.deliver_p99);
    std::fflush(stdout);
  }
  return 0;
}
