// cairn-generate-history: writes a realistic history (ops/bench/history_generator.h) into the
// embedded log of a master's data directory, for benchmarks and for trying the history tools on
// a log of a real size. Prints what it wrote.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "base/command_line.h"
#include "ops/bench/history_generator.h"

int main(int argc, char** argv) {
  using namespace cairn;
  CLI::App app("Writes a realistic cluster history into a master's data directory.",
               "cairn-generate-history");
  command_line::Configure(app);
  bench::HistoryOptions options;
  std::string data_dir;
  app.add_option("--data", data_dir, "the master's data directory (its log must be empty)")
      ->required();
  app.add_option("--events", options.events, "how many events")->capture_default_str();
  app.add_option("--seed", options.seed, "the simulation's seed")->capture_default_str();
  app.add_option("--users", options.users, "how many users")->capture_default_str();
  if (auto stop = command_line::Parse(app, std::vector<std::string>(argv + 1, argv + argc))) {
    return command_line::Finish(*stop);
  }
  LogConfig config;
  config.data_dir = data_dir;
  auto log = OpenEventLog(config);
  if (!log.ok()) {
    std::cerr << "cairn-generate-history: " << log.status().message() << "\n";
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  auto summary = bench::GenerateHistory(**log, options);
  if (!summary.ok()) {
    std::cerr << "cairn-generate-history: " << summary.status().message() << "\n";
    return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "wrote %llu events in %.1f s: %lld commands, %lld experiments, %lld preemptions, "
      "%lld agent departures, %lld refused reports, %.1f simulated days\n",
      static_cast<unsigned long long>(summary->events), seconds,
      static_cast<long long>(summary->commands), static_cast<long long>(summary->experiments),
      static_cast<long long>(summary->preemptions),
      static_cast<long long>(summary->agent_departures), static_cast<long long>(summary->refusals),
      static_cast<double>(summary->last_time_unix_micros - summary->first_time_unix_micros) /
          86400e6);
  return 0;
}
