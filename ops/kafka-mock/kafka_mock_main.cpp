// cairn-kafka-mock: librdkafka's mock Kafka cluster as a process of its own, with Cairn's topics
// created, for the local cluster in Kafka mode and for benchmarks. It prints one line,
// "cairn-kafka-mock bootstraps: HOST:PORT,...", and runs until SIGTERM or SIGINT.
// Data lives in memory, and the mock keeps only about the last 5 MiB of each partition.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/command_line.h"
#include "base/files.h"
#include "base/log.h"
#include "tests/events_kafka/mock_cluster.h"

int main(int argc, char** argv) {
  using namespace cairn;
  CLI::App app(
      "librdkafka's mock Kafka cluster with Cairn's topics, for the local cluster in Kafka mode "
      "and for benchmarks. Prints 'cairn-kafka-mock bootstraps: HOST:PORT,...' and runs until "
      "SIGTERM or SIGINT.",
      "cairn-kafka-mock");
  command_line::Configure(app);
  int brokers = 3;
  std::string topic_prefix = "cairn";
  int placement_partitions = 4;
  std::string bootstrap_file;
  app.add_option("--brokers", brokers, "mock brokers to run")
      ->check(CLI::Range(1, 64))
      ->type_name("N")
      ->capture_default_str();
  app.add_option("--topic-prefix", topic_prefix,
                 "creates PREFIX.events (1 partition), PREFIX.placements and PREFIX.tasklogs")
      ->check([](const std::string& value) { return value.empty() ? "must not be empty" : ""; })
      ->type_name("PREFIX")
      ->capture_default_str();
  app.add_option("--placement-partitions", placement_partitions, "partitions of PREFIX.placements")
      ->check(CLI::Range(1, 1024))
      ->type_name("N")
      ->capture_default_str();
  app.add_option("--bootstrap-file", bootstrap_file,
                 "also write the bootstrap list to FILE (removed on exit)")
      ->type_name("FILE");
  log::Level log_level = log::Level::kInfo;
  command_line::AddLogLevelOption(app, log_level);
  if (auto stop = command_line::Parse(app, std::vector<std::string>(argv + 1, argv + argc))) {
    return command_line::Finish(*stop);
  }
  log::Init("cairn-kafka-mock", log_level);

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

  auto cluster = testing::MockKafkaCluster::Start(brokers);
  if (!cluster.ok()) {
    log::Error("kafka_mock", "cannot start the brokers: {}", cluster.status());
    return 1;
  }
  Status topics = (*cluster)->CreateCairnTopics(topic_prefix, placement_partitions);
  if (!topics.ok()) {
    log::Error("kafka_mock", "cannot create the topics: {}", topics);
    return 1;
  }
  const std::string& bootstraps = (*cluster)->bootstraps();
  // Written whole or not at all: a reader never sees half a line.
  if (!bootstrap_file.empty()) {
    Status written = WriteFileAtomically(bootstrap_file, bootstraps + "\n");
    if (!written.ok()) {
      log::Error("kafka_mock", "cannot write the bootstrap file: {}", written);
      return 1;
    }
  }
  std::printf("cairn-kafka-mock bootstraps: %s\n", bootstraps.c_str());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  if (!bootstrap_file.empty()) unlink(bootstrap_file.c_str());
  return 0;
}
