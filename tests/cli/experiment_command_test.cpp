// What `cairn experiment create CONFIG CONTEXT --package FILE` sends (cli/experiment_command.h):
// Determined's request body plus the packages, refused before sending when over the 96 MiB cap.
#include "cli/experiment_command.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/document_limits.h"
#include "base/encoding.h"
#include "tests/support/test_support.h"

namespace cairn::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void Write(const std::string& path, const std::string& content, mode_t mode = 0644) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << content;
  ::chmod(path.c_str(), mode);
}

std::string Decoded(const json& entry) {
  auto decoded = Base64Decode(entry["content"].get<std::string>());
  return decoded.ok() ? *decoded : "(not base64)";
}

TEST(ExperimentCreateBody, SendsTheConfigTheContextAndThePackages) {
  testing::TempDir dir;
  Write(dir.Sub("experiment.yaml"), "name: x\nentrypoint: model_def:T\n");
  Write(dir.Sub("context/model_def.py"), "class T: pass\n");
  Write(dir.Sub("context/data/table.bin"), std::string("\x01\x02", 2), 0600);
  Write(dir.Sub("context/__pycache__/model_def.cpython-311.pyc"), "bytecode");
  Write(dir.Sub("dist/features-1.0-py3-none-any.whl"), "PK wheel bytes");

  auto body = ExperimentCreateBody(dir.Sub("experiment.yaml"), dir.Sub("context"),
                                   {dir.Sub("dist/features-1.0-py3-none-any.whl")});
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ((*body)["config"], "name: x\nentrypoint: model_def:T\n");
  EXPECT_EQ((*body)["activate"], true);
  const json& files = (*body)["modelDefinition"];
  ASSERT_EQ(files.size(), 2u) << files.dump();  // no __pycache__
  EXPECT_EQ(files[0]["path"], "data/table.bin");
  EXPECT_EQ(files[0]["mode"], 0600);
  EXPECT_EQ(Decoded(files[0]), std::string("\x01\x02", 2));
  EXPECT_EQ(files[1]["path"], "model_def.py");
  EXPECT_EQ(files[1]["type"], 48);
  ASSERT_EQ((*body)["packages"].size(), 1u);
  EXPECT_EQ((*body)["packages"][0]["path"], "features-1.0-py3-none-any.whl");
  EXPECT_EQ(Decoded((*body)["packages"][0]), "PK wheel bytes");

  // Without packages the body is Determined's own.
  auto plain = ExperimentCreateBody(dir.Sub("experiment.yaml"), dir.Sub("context"), {});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_FALSE(plain->contains("packages"));
}

TEST(ExperimentCreateBody, RefusesMissingFilesAndTooMuchBeforeSending) {
  testing::TempDir dir;
  Write(dir.Sub("experiment.yaml"), "name: x\n");
  Write(dir.Sub("context/model_def.py"), std::string(1000, 'm'));
  auto no_package = ExperimentCreateBody(dir.Sub("experiment.yaml"), dir.Sub("context"),
                                         {dir.Sub("missing.whl")});
  ASSERT_FALSE(no_package.ok());
  EXPECT_EQ(no_package.status().message(),
            "the package " + dir.Sub("missing.whl") + " is not a file");
  auto no_context = ExperimentCreateBody(dir.Sub("experiment.yaml"), dir.Sub("nowhere"), {});
  ASSERT_FALSE(no_context.ok());
  EXPECT_EQ(no_context.status().message(),
            "the context " + dir.Sub("nowhere") + " is not a directory");

  // A sparse file: its size counts, and it is refused without being read.
  const std::string big = dir.Sub("big-1.0.tar.gz");
  Write(big, "");
  fs::resize_file(big, kMaxContextWithPackagesBytes - 1000 + 1);
  auto refused = ExperimentCreateBody(dir.Sub("experiment.yaml"), dir.Sub("context"), {big});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().message(),
            "the model definition (1000 bytes, 0.0 MiB) and its packages (100662297 bytes, "
            "96.0 MiB) total 100663297 bytes, 96.0 MiB, over the 96 MiB cap");
}

}  // namespace
}  // namespace cairn::cli
