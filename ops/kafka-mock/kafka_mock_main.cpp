// cairn-kafka-mock: librdkafka's mock Kafka cluster as a process of its own, with Cairn's topics
// created, for the local cluster in Kafka mode and for benchmarks. It prints one line,
// "cairn-kafka-mock bootstraps: HOST:PORT,...", and runs until SIGTERM or SIGINT.
// Data lives in memory, and the mock keeps only about the last 5 MiB of each partition.
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "tests/events_kafka/mock_cluster.h"

namespace {

constexpr char kUsage[] =
    "usage: cairn-kafka-mock [--brokers N] [--topic-prefix P] [--placement-partitions N]\n"
    "                        [--bootstrap-file F]\n"
    "  --brokers N                mock brokers to run (default 3)\n"
    "  --topic-prefix P           creates P.events (1 partition) and P.placements (default cairn)\n"
    "  --placement-partitions N   partitions of P.placements (default 4)\n"
    "  --bootstrap-file F         also write the bootstrap list to F (removed on exit)\n";

struct Options {
  int brokers = 3;
  std::string topic_prefix = "cairn";
  int placement_partitions = 4;
  std::string bootstrap_file;
};

bool ParsePositive(std::string_view text, int* value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size() && *value > 0;
}

// Accepts "--name value" and "--name=value". Returns false (after saying why) on bad input.
bool ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    std::string_view name = arg;
    std::string_view value;
    bool has_value = false;
    if (size_t equals = arg.find('='); equals != std::string_view::npos) {
      name = arg.substr(0, equals);
      value = arg.substr(equals + 1);
      has_value = true;
    } else if (i + 1 < argc) {
      value = argv[i + 1];
    }
    bool ok = true;
    if (name == "--brokers") {
      ok = ParsePositive(value, &options->brokers);
    } else if (name == "--placement-partitions") {
      ok = ParsePositive(value, &options->placement_partitions);
    } else if (name == "--topic-prefix") {
      options->topic_prefix = value;
      ok = !value.empty();
    } else if (name == "--bootstrap-file") {
      options->bootstrap_file = value;
      ok = !value.empty();
    } else {
      std::fprintf(stderr, "cairn-kafka-mock: unknown option %s\n%s", argv[i], kUsage);
      return false;
    }
    if (!ok) {
      std::fprintf(stderr, "cairn-kafka-mock: bad value for %.*s\n%s",
                   static_cast<int>(name.size()), name.data(), kUsage);
      return false;
    }
    if (!has_value) ++i;
  }
  return true;
}

// Written to a temporary name and renamed, so a reader never sees half a line.
bool WriteBootstrapFile(const std::string& path, const std::string& bootstraps) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << bootstraps << "\n";
    if (!out.flush()) return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) return 2;

  // A shell starts background jobs with SIGINT ignored, and an ignored signal never reaches
  // sigwait: restore the default first. Then block both before the brokers' threads start, so
  // that they inherit the mask and sigwait below is the only receiver.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto cluster = cairn::testing::MockKafkaCluster::Start(options.brokers);
  if (!cluster.ok()) {
    std::fprintf(stderr, "cairn-kafka-mock: %s\n", cluster.status().ToString().c_str());
    return 1;
  }
  cairn::Status topics =
      (*cluster)->CreateCairnTopics(options.topic_prefix, options.placement_partitions);
  if (!topics.ok()) {
    std::fprintf(stderr, "cairn-kafka-mock: %s\n", topics.ToString().c_str());
    return 1;
  }
  const std::string& bootstraps = (*cluster)->bootstraps();
  if (!options.bootstrap_file.empty() && !WriteBootstrapFile(options.bootstrap_file, bootstraps)) {
    std::fprintf(stderr, "cairn-kafka-mock: cannot write %s\n", options.bootstrap_file.c_str());
    return 1;
  }
  std::printf("cairn-kafka-mock bootstraps: %s\n", bootstraps.c_str());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  if (!options.bootstrap_file.empty()) unlink(options.bootstrap_file.c_str());
  return 0;
}
