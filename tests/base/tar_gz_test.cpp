// The archives TarGzWriter writes are read back by a real tar (GNU tar through gzip), the way
// Determined's CLI reads them with Python's tarfile.
#include "base/tar_gz.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/test_support.h"

namespace cairn {
namespace {

using testing::RunToEnd;
using testing::TempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

// Writes `archive` to dir/a.tgz and extracts it into dir/out with tar; returns tar's exit code.
int Extract(const TempDir& dir, const std::string& archive) {
  WriteFile(dir.Sub("a.tgz"), archive);
  std::filesystem::create_directories(dir.Sub("out"));
  return RunToEnd({"tar", "-xzf", dir.Sub("a.tgz"), "-C", dir.Sub("out")}, std::chrono::seconds(30))
      .exit_code;
}

TEST(TarGzTest, TarExtractsFilesDirectoriesLongPathsAndFilesFromDisk) {
  TempDir dir;
  std::string big(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 7919) % 251);
  WriteFile(dir.Sub("source.bin"), big);
  const std::string long_path = std::string(150, 'd') + "/" + std::string(60, 'f') + ".txt";

  std::string archive;
  TarGzWriter writer([&](std::string_view bytes) {
    archive.append(bytes);
    return true;
  });
  ASSERT_TRUE(writer.AddDirectory("empty").ok());
  ASSERT_TRUE(writer.AddFile("a/b/c.py", 0755, "print('hi')\n").ok());
  ASSERT_TRUE(writer.AddFile("zero", 0644, "").ok());
  ASSERT_TRUE(writer.AddFile(long_path, 0644, "long").ok());
  ASSERT_TRUE(writer.AddFileFromDisk("weights/model.bin", dir.Sub("source.bin")).ok());
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_LT(archive.size(), big.size());  // compressed

  ASSERT_EQ(Extract(dir, archive), 0);
  EXPECT_TRUE(std::filesystem::is_directory(dir.Sub("out/empty")));
  EXPECT_EQ(ReadAll(dir.Sub("out/a/b/c.py")), "print('hi')\n");
  auto perms = std::filesystem::status(dir.Sub("out/a/b/c.py")).permissions();
  EXPECT_NE(perms & std::filesystem::perms::owner_exec, std::filesystem::perms::none);
  EXPECT_EQ(std::filesystem::file_size(dir.Sub("out/zero")), 0u);
  EXPECT_EQ(ReadAll(dir.Sub("out/" + long_path)), "long");
  EXPECT_EQ(ReadAll(dir.Sub("out/weights/model.bin")), big);
}

TEST(TarGzTest, AStoredArchiveIsStillGzipAndExtracts) {
  TempDir dir;
  std::string archive;
  TarGzWriter writer(
      [&](std::string_view bytes) {
        archive.append(bytes);
        return true;
      },
      TarGzWriter::Compression::kStore);
  const std::string zeros(1 << 20, '\0');
  ASSERT_TRUE(writer.AddFile("zeros", 0644, zeros).ok());
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_GT(archive.size(), zeros.size());  // stored, not compressed
  ASSERT_EQ(Extract(dir, archive), 0);
  EXPECT_EQ(ReadAll(dir.Sub("out/zeros")), zeros);
}

TEST(TarGzTest, RefusesPathsThatEscapeOrAreEmpty) {
  TarGzWriter writer([](std::string_view) { return true; });
  for (const char* bad : {"", "/etc/passwd", "../up", "a/../b", "a//b", "./a"}) {
    EXPECT_EQ(writer.AddFile(bad, 0644, "x").code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(writer.AddFile("fine/name", 0644, "x").ok());
}

TEST(TarGzTest, AReaderThatGoesAwayStopsTheArchive) {
  TempDir dir;
  std::string noise(4 * 1024 * 1024, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * i * 31) >> 3);
  int calls = 0;
  TarGzWriter writer([&](std::string_view) { return ++calls < 2; });
  Status added = writer.AddFile("noise", 0644, noise);
  Status finished = added.ok() ? writer.Finish() : added;
  EXPECT_EQ(finished.code(), StatusCode::kUnavailable);
  EXPECT_EQ(calls, 2);  // nothing more was written after the sink said no
  EXPECT_EQ(writer.AddFile("more", 0644, "x").code(), StatusCode::kUnavailable);
}

// The checkpoint download archives files a trial wrote: a link, a FIFO, or a path that leads
// outside the directory must not make the master archive what it may read itself.
TEST(TarGzTest, OnlyRegularFilesInsideTheGivenDirectoryAreArchived) {
  TempDir dir;
  std::filesystem::create_directories(dir.Sub("inside"));
  WriteFile(dir.Sub("outside.txt"), "secret");
  WriteFile(dir.Sub("inside/ok.txt"), "fine");
  std::filesystem::create_symlink(dir.Sub("outside.txt"), dir.Sub("inside/link"));
  std::filesystem::create_directory_symlink(dir.path(), dir.Sub("inside/up"));
  ASSERT_EQ(::mkfifo(dir.Sub("inside/fifo").c_str(), 0600), 0);
  const std::string within = std::filesystem::canonical(dir.Sub("inside")).string();
  std::string archive;
  TarGzWriter writer([&](std::string_view bytes) {
    archive.append(bytes);
    return true;
  });
  EXPECT_TRUE(writer.AddFileFromDisk("ok.txt", dir.Sub("inside/ok.txt"), within).ok());
  EXPECT_EQ(writer.AddFileFromDisk("link", dir.Sub("inside/link"), within).code(),
            StatusCode::kIOError);  // O_NOFOLLOW: a final link is not opened
  EXPECT_EQ(writer.AddFileFromDisk("up", dir.Sub("inside/up/outside.txt"), within).code(),
            StatusCode::kPermissionDenied);  // a link earlier in the path leads out
  EXPECT_EQ(writer.AddFileFromDisk("fifo", dir.Sub("inside/fifo"), within).code(),
            StatusCode::kPermissionDenied);  // and nothing blocks on a FIFO
  ASSERT_TRUE(writer.Finish().ok());
  ASSERT_EQ(Extract(dir, archive), 0);
  EXPECT_EQ(ReadAll(dir.Sub("out/ok.txt")), "fine");
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("out/up")));
}

TEST(TarGzTest, AMissingSourceFileIsAnError) {
  TarGzWriter writer([](std::string_view) { return true; });
  EXPECT_EQ(writer.AddFileFromDisk("x", "/nonexistent/file").code(), StatusCode::kIOError);
}

}  // namespace
}  // namespace cairn
