// Follows the embedded log in --data DIR into DIR/projections with tiny batches (with --bulk
// BYTES, catching up in bulk with that budget per projector and files ingested), printing
// "start N", "applied N" after progress, then "digest NAME HEX" lines and "done N" once it
// has applied the whole log. The crash test kills it with SIGKILL while it works.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "events/event_log.h"
#include "projections/projections.h"

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  std::string data_dir;
  size_t batch = 3;
  size_t bulk_bytes = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--data") {
      data_dir = argv[i + 1];
    } else if (flag == "--batch") {
      batch = std::strtoul(argv[i + 1], nullptr, 10);
    } else if (flag == "--bulk") {
      bulk_bytes = std::strtoul(argv[i + 1], nullptr, 10);
    } else {
      std::cerr << "usage: cairn_projection_crash_helper --data DIR [--batch N] [--bulk BYTES]"
                << std::endl;
      return 2;
    }
  }
  if (data_dir.empty() || batch == 0) {
    std::cerr << "usage: cairn_projection_crash_helper --data DIR [--batch N] [--bulk BYTES]"
              << std::endl;
    return 2;
  }
  cairn::LogConfig config;
  config.data_dir = data_dir;
  config.read_only = true;
  auto log = cairn::OpenEventLog(config);
  if (!log.ok()) {
    std::cerr << log.status().ToString() << std::endl;
    return 1;
  }
  auto end = (*log)->EndOffset();
  if (!end.ok()) {
    std::cerr << end.status().ToString() << std::endl;
    return 1;
  }
  cairn::projections::EngineOptions options;
  options.max_batch_events = batch;
  options.bulk_load_bytes = bulk_bytes;
  options.bulk_load_min_events = 1;
  options.bulk_batch_events = batch;
  auto projections = cairn::Projections::Open(data_dir + "/projections", log->get(), options);
  if (!projections.ok()) {
    std::cerr << projections.status().ToString() << std::endl;
    return 1;
  }
  std::cout << "start " << (*projections)->AppliedOffset() << std::endl;
  while ((*projections)->AppliedOffset() < *end) {
    cairn::Status status = (*projections)->WaitForOffset((*projections)->AppliedOffset(), 30s);
    if (!status.ok()) {
      std::cerr << status.ToString() << std::endl;
      return 1;
    }
    std::cout << "applied " << (*projections)->AppliedOffset() << std::endl;
  }
  (*projections)->Stop();
  for (const auto& name : cairn::projections::ProjectorNames()) {
    auto digest = (*projections)->Digest(name);
    if (!digest.ok()) {
      std::cerr << digest.status().ToString() << std::endl;
      return 1;
    }
    std::cout << "digest " << name << " " << *digest << std::endl;
  }
  std::cout << "done " << (*projections)->AppliedOffset() << std::endl;
  return 0;
}
