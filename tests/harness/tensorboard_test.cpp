// TensorBoard event files, end to end: a real trial run by the real harness (against the harness
// tests' fake master) writes them, this file's own decoder (tests/support/tfevents_reader.h)
// reads them back, and the TensorBoard stand-in (tests/tools/fake_tensorboard.py) serves them
// over loopback HTTP. Expected values are computed here from the test trial's formula.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/files.h"
#include "net/http_client.h"
#include "tests/support/test_support.h"
#include "tests/support/tfevents_reader.h"

namespace cairn::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr auto kTimeout = std::chrono::seconds(30);
const std::string kPython = CAIRN_PYTHON3;
const std::string kSource = CAIRN_SOURCE_DIR;

// The event files of one directory, by name.
std::vector<std::string> EventFilesIn(const std::string& directory) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<TfEvent> ReadEvents(const std::string& path) {
  auto bytes = ReadWholeFile(path);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  if (!bytes.ok()) return {};
  auto events = ReadEventFile(*bytes);
  EXPECT_TRUE(events.ok()) << path << ": " << events.status().ToString();
  return events.ok() ? *events : std::vector<TfEvent>{};
}

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

TEST(TfEventsReaderTest, Crc32cHasItsCheckValue) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(""), 0u);
}

// --- the harness writes them -------------------------------------------------------------------

json Train(int batches, int start) {
  return {{"kind", "TRAIN"}, {"batches", batches}, {"startBatch", start}};
}
const json kValidate = {{"kind", "VALIDATE"}};
const json kExit = {{"kind", "EXIT"}, {"reason", "done"}};

class HarnessEventFilesTest : public ::testing::Test {
 protected:
  // Runs the CounterTrial through the harness; the results the fake master received.
  json RunTrial(const json& workloads) {
    FinishedProcess run =
        RunToEnd({kPython, kSource + "/tests/harness/run_trial.py", "--checkpoint-dir", storage(),
                  "--experiment-id", "3", "--trial-id", "11", "--rate", "0.5", "--workloads",
                  workloads.dump()},
                 kTimeout);
    EXPECT_EQ(run.exit_code, 0) << run.Text();
    std::string exit_line, results;
    for (const auto& line : run.lines) {
      if (line.rfind("exit ", 0) == 0) exit_line = line;
      if (line.rfind("results ", 0) == 0) results = line.substr(8);
    }
    EXPECT_EQ(exit_line, "exit 0") << run.Text();
    return json::parse(results.empty() ? "[]" : results);
  }
  std::string storage() const { return dir_.Sub("checkpoints"); }
  std::string trial_directory() const { return storage() + "/tensorboard/experiment/3/trial/11"; }

  TempDir dir_;
};

// CounterTrial's loss after `batches` batches at `rate`: 1 / (1 + rate * (1 + 2 + ... + batches)).
double CounterLoss(double rate, int batches) {
  return 1.0 / (1.0 + rate * batches * (batches + 1) / 2.0);
}

TEST_F(HarnessEventFilesTest, ATrialsMetricsBecomeScalarsAtTheStepsCompleted) {
  const auto started = static_cast<double>(std::time(nullptr));
  const json results =
      RunTrial({Train(5, 0), kValidate, Train(3, 5), Train(4, 8), kValidate, kExit});
  const auto ended = static_cast<double>(std::time(nullptr)) + 1;

  const std::vector<std::string> files = EventFilesIn(trial_directory());
  ASSERT_EQ(files.size(), 1u);
  // events.out.tfevents.<unix seconds>.<hostname>
  const std::string name = fs::path(files[0]).filename().string();
  const std::string prefix = "events.out.tfevents.";
  ASSERT_EQ(name.rfind(prefix, 0), 0u) << name;
  const size_t dot = name.find('.', prefix.size());
  ASSERT_NE(dot, std::string::npos) << name;
  const double file_seconds = std::stod(name.substr(prefix.size(), dot - prefix.size()));
  EXPECT_GE(file_seconds, started);
  EXPECT_LE(file_seconds, ended);
  EXPECT_EQ(name.substr(dot + 1), HostName());

  struct Expected {
    int64_t step;
    std::vector<std::pair<std::string, double>> scalars;
  };
  const std::vector<Expected> expected = {
      {5, {{"training/loss", CounterLoss(0.5, 5)}, {"training/end_batch", 5}}},
      {5, {{"validation/validation_loss", CounterLoss(0.5, 5)}, {"validation/train_calls", 1}}},
      {8, {{"training/loss", CounterLoss(0.5, 8)}, {"training/end_batch", 8}}},
      {12, {{"training/loss", CounterLoss(0.5, 12)}, {"training/end_batch", 12}}},
      {12, {{"validation/validation_loss", CounterLoss(0.5, 12)}, {"validation/train_calls", 3}}},
  };
  const std::vector<TfEvent> events = ReadEvents(files[0]);
  ASSERT_EQ(events.size(), expected.size() + 1);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_TRUE(events[0].scalars.empty());
  double previous_time = started;
  for (size_t i = 0; i < expected.size(); ++i) {
    const TfEvent& event = events[i + 1];
    SCOPED_TRACE("event " + std::to_string(i + 1));
    EXPECT_EQ(event.step, expected[i].step);
    EXPECT_EQ(event.file_version, "");
    EXPECT_GE(event.wall_time, previous_time);
    EXPECT_LE(event.wall_time, ended);
    previous_time = event.wall_time;
    ASSERT_EQ(event.scalars.size(), expected[i].scalars.size());
    for (size_t j = 0; j < event.scalars.size(); ++j) {
      EXPECT_EQ(event.scalars[j].first, expected[i].scalars[j].first);
      // simple_value is a float: the number as float32.
      EXPECT_EQ(event.scalars[j].second, static_cast<float>(expected[i].scalars[j].second));
    }
  }
  // And they are what the trial reported to the master, in the same order.
  ASSERT_EQ(results.size(), 5u);
  for (size_t i = 0; i < results.size(); ++i) {
    const json& metrics = results[i]["metrics"];
    ASSERT_EQ(metrics.size(), events[i + 1].scalars.size());
    for (const auto& [tag, value] : events[i + 1].scalars) {
      const std::string metric = tag.substr(tag.find('/') + 1);
      EXPECT_EQ(value, static_cast<float>(metrics.at(metric).get<double>())) << tag;
    }
  }
}

TEST_F(HarnessEventFilesTest, ACutOrDamagedFileIsCorruptionToTheReader) {
  RunTrial({Train(2, 0), kValidate, kExit});
  const std::vector<std::string> files = EventFilesIn(trial_directory());
  ASSERT_EQ(files.size(), 1u);
  auto bytes = ReadWholeFile(files[0]);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(ReadEventFile(*bytes).ok());

  std::string cut = bytes->substr(0, bytes->size() - 1);
  EXPECT_EQ(ReadEventFile(cut).status().code(), StatusCode::kCorruption);
  std::string flipped = *bytes;
  flipped[flipped.size() - 10] ^= 0x01;  // inside the last record's data
  auto damaged = ReadEventFile(flipped);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("CRC"), std::string::npos)
      << damaged.status().ToString();
}

// --- the stand-in serves them ------------------------------------------------------------------

// Writes metrics with the harness's own writer (cairn_harness.tfevents), one process per call:
// `reports` is [{"experiment", "trial", "group", "step", "metrics"}, ...].
void WriteWithHarness(const std::string& storage, const std::vector<json>& reports) {
  const std::string script =
      "import json, sys\n"
      "sys.path.insert(0, sys.argv[1])\n"
      "from cairn_harness.tfevents import TrialEventFiles\n"
      "files = {}\n"
      "for r in json.loads(sys.argv[3]):\n"
      "    key = (r['experiment'], r['trial'])\n"
      "    if key not in files:\n"
      "        files[key] = TrialEventFiles(sys.argv[2], *key)\n"
      "    files[key].report(r['group'], r['step'], r['metrics'])\n";
  FinishedProcess run = RunToEnd(
      {kPython, "-c", script, kSource + "/agent/harness", storage, json(reports).dump()}, kTimeout);
  ASSERT_EQ(run.exit_code, 0) << run.Text();
  ASSERT_TRUE(run.lines.empty()) << run.Text();  // no warning: everything was written
}

json Report(int trial, const std::string& group, int step, const json& metrics) {
  return {
      {"experiment", 3}, {"trial", trial}, {"group", group}, {"step", step}, {"metrics", metrics}};
}

class FakeTensorBoardTest : public ::testing::Test {
 protected:
  void StartServer(const std::vector<std::string>& source_flags) {
    std::vector<std::string> argv = {kPython,         kSource + "/tests/tools/fake_tensorboard.py",
                                     "--port",        "0",
                                     "--host",        "127.0.0.1",
                                     "--path_prefix", "/proxy/task-9/"};
    argv.insert(argv.end(), source_flags.begin(), source_flags.end());
    auto child = ChildProcess::Start(argv);
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    server_ = std::move(*child);
    auto first = server_->WaitForLine([](const std::string&) { return true; }, kTimeout);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    ASSERT_EQ(first->rfind("listening on ", 0), 0u) << *first;
    client_ = std::make_unique<net::Client>("127.0.0.1", std::stoi(first->substr(13)));
  }

  net::ClientResponse Get(const std::string& target) {
    auto response = client_->Request("GET", target);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : net::ClientResponse{};
  }
  json GetJson(const std::string& target) {
    net::ClientResponse response = Get(target);
    EXPECT_EQ(response.status, 200) << target << ": " << response.body;
    return json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  }
  json Scalars(const std::string& run, const std::string& tag) {
    return GetJson("/proxy/task-9/data/plugin/scalars/scalars?run=" + run + "&tag=" + tag);
  }

  std::string storage() const { return dir_.Sub("checkpoints"); }
  std::string logdir() const { return storage() + "/tensorboard"; }

  TempDir dir_;
  std::unique_ptr<ChildProcess> server_;
  std::unique_ptr<net::Client> client_;
};

TEST_F(FakeTensorBoardTest, ServesRunsTagsAndScalarsOfTheHarnessFilesUnderThePrefix) {
  // Two trials; the values are the test's own, the steps those a trial would report at.
  WriteWithHarness(storage(), {Report(11, "training", 100, {{"loss", 0.75}}),
                               Report(11, "training", 200, {{"loss", 0.5}}),
                               Report(11, "validation", 200, {{"validation_loss", 0.625}}),
                               Report(12, "training", 100, {{"loss", 1.0 / 3}})});
  StartServer({"--logdir", logdir()});

  EXPECT_EQ(GetJson("/proxy/task-9/data/runs"),
            json({"experiment/3/trial/11", "experiment/3/trial/12"}));
  const json tags = GetJson("/proxy/task-9/data/plugin/scalars/tags");
  ASSERT_TRUE(tags.is_object()) << tags.dump();
  EXPECT_EQ(tags.size(), 2u);
  std::vector<std::string> trial_11_tags;
  for (const auto& [tag, description] : tags["experiment/3/trial/11"].items()) {
    trial_11_tags.push_back(tag);
  }
  EXPECT_EQ(trial_11_tags,
            (std::vector<std::string>{"training/loss", "validation/validation_loss"}));
  EXPECT_TRUE(tags["experiment/3/trial/12"].contains("training/loss"));

  // [[wall_time, step, value], ...]: the values as float32, the times those in the file.
  const std::vector<TfEvent> file_11 =
      ReadEvents(EventFilesIn(logdir() + "/experiment/3/trial/11").at(0));
  ASSERT_EQ(file_11.size(), 4u);
  const json loss = Scalars("experiment/3/trial/11", "training/loss");
  ASSERT_EQ(loss.size(), 2u) << loss.dump();
  EXPECT_EQ(loss[0], json({file_11[1].wall_time, 100, 0.75}));
  EXPECT_EQ(loss[1], json({file_11[2].wall_time, 200, 0.5}));
  const json validation = Scalars("experiment/3/trial/11", "validation/validation_loss");
  EXPECT_EQ(validation, json({{file_11[3].wall_time, 200, 0.625}}));
  const json third = Scalars("experiment/3/trial/12", "training/loss");
  ASSERT_EQ(third.size(), 1u) << third.dump();
  EXPECT_EQ(third[0][2].get<double>(), static_cast<double>(static_cast<float>(1.0 / 3)));

  // What a trial appends shows on the next request.
  WriteWithHarness(storage(), {Report(11, "training", 300, {{"loss", 0.25}})});
  const json more = Scalars("experiment/3/trial/11", "training/loss");
  ASSERT_EQ(more.size(), 3u) << more.dump();
  EXPECT_EQ(more[2][1], 300);
  EXPECT_EQ(more[2][2], 0.25);

  net::ClientResponse page = Get("/proxy/task-9/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("experiment/3/trial/12"), std::string::npos) << page.body;
}

TEST_F(FakeTensorBoardTest, AnswersLikeTensorBoardOutsideItsRoutes) {
  WriteWithHarness(storage(), {Report(11, "training", 100, {{"loss", 0.75}})});
  StartServer({"--logdir", logdir()});

  net::ClientResponse bare = Get("/proxy/task-9");
  EXPECT_EQ(bare.status, 301);
  EXPECT_EQ(bare.headers["location"], "/proxy/task-9/");
  EXPECT_EQ(Get("/").status, 404);
  EXPECT_EQ(Get("/data/runs").status, 404);  // only under the prefix
  EXPECT_EQ(Get("/proxy/task-9/data/plugin/scalars/scalars?run=experiment/3/trial/11").status, 400);
  EXPECT_EQ(
      Get("/proxy/task-9/data/plugin/scalars/scalars?run=experiment/3/trial/11&tag=nope").status,
      404);
  auto post = client_->Request("POST", "/proxy/task-9/data/runs", "{}");
  ASSERT_TRUE(post.ok()) << post.status().ToString();
  EXPECT_EQ(post->status, 405);
}

TEST_F(FakeTensorBoardTest, NamesRunsByTheLogdirSpecsNames) {
  WriteWithHarness(storage(), {Report(11, "training", 100, {{"loss", 0.75}}),
                               Report(12, "training", 100, {{"loss", 0.5}})});
  StartServer({"--logdir_spec", "exp3:" + logdir() + "/experiment/3/trial"});
  EXPECT_EQ(GetJson("/proxy/task-9/data/runs"), json({"exp3/11", "exp3/12"}));
  EXPECT_EQ(Scalars("exp3/12", "training/loss"),
            json({{ReadEvents(EventFilesIn(logdir() + "/experiment/3/trial/12").at(0))[1].wall_time,
                   100, 0.5}}));
}

TEST_F(FakeTensorBoardTest, ServesWhatPrecedesADamagedRecord) {
  WriteWithHarness(storage(), {Report(11, "training", 100, {{"loss", 0.75}}),
                               Report(11, "training", 200, {{"loss", 0.5}})});
  const std::string file = EventFilesIn(logdir() + "/experiment/3/trial/11").at(0);
  auto bytes = ReadWholeFile(file);
  ASSERT_TRUE(bytes.ok());
  std::string damaged = *bytes;
  damaged[damaged.size() - 10] ^= 0x01;  // inside the last record's data
  ASSERT_TRUE(WriteFileAtomically(file, damaged).ok());
  StartServer({"--logdir", logdir()});

  const json loss = Scalars("experiment/3/trial/11", "training/loss");
  ASSERT_EQ(loss.size(), 1u) << loss.dump();
  EXPECT_EQ(loss[0][1], 100);
  EXPECT_EQ(Get("/proxy/task-9/data/runs").status, 200);  // still serving
}

TEST_F(FakeTensorBoardTest, RefusesFlagsTensorBoardRefuses) {
  const std::string tool = kSource + "/tests/tools/fake_tensorboard.py";
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
           {"--port", "0"},                                  // no log directory
           {"--logdir", "/tmp", "--logdir_spec", "a:/tmp"},  // both
           {"--logdir", "/tmp", "--host", "127.0.0.1", "--bind_all"},
           {"--logdir", "/tmp", "--path_prefix", "proxy/x"},  // not absolute
           {"--logdir", "/tmp", "--port", "70000"}}) {
    std::vector<std::string> argv = {kPython, tool};
    argv.insert(argv.end(), flags.begin(), flags.end());
    FinishedProcess run = RunToEnd(argv, kTimeout);
    EXPECT_EQ(run.exit_code, 2) << run.Text();
    EXPECT_NE(run.Text().find("error:"), std::string::npos) << run.Text();
  }
}

}  // namespace
}  // namespace cairn::testing
