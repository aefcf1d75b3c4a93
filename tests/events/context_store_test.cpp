// The model definition ("context"): decoding Determined's modelDefinition array with every
// refusal and its message, and the content-addressed store: round trips, one copy per context,
// digests independent of input order, a pinned encoding, and damaged files caught on read.
#include "events/context_store.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/document_limits.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using nlohmann::json;

std::string Base64(const std::string& bytes) {
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');
  const int length = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                     reinterpret_cast<const unsigned char*>(bytes.data()),
                                     static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(length));
  return out;
}

json FileEntry(const std::string& path, const std::string& content, int mode = 33188) {
  return {{"path", path},
          {"type", 48},
          {"content", Base64(content)},
          {"mode", mode},
          {"mtime", "1700000000"},
          {"uid", 0},
          {"gid", 0}};
}

json DirectoryEntry(const std::string& path) {
  return {{"path", path}, {"type", 53}, {"content", ""}, {"mode", 16877}, {"mtime", "1700000000"}};
}

std::vector<ContextFile> MustDecode(const json& model_definition) {
  auto files = DecodeModelDefinition(model_definition);
  EXPECT_TRUE(files.ok()) << files.status().ToString();
  return files.ok() ? *files : std::vector<ContextFile>{};
}

void ExpectRefused(const json& model_definition, StatusCode code, const std::string& message) {
  auto files = DecodeModelDefinition(model_definition);
  ASSERT_FALSE(files.ok()) << "decoded, but expected: " << message;
  EXPECT_EQ(files.status().code(), code) << files.status().ToString();
  EXPECT_EQ(files.status().message(), message);
}

void ExpectInvalid(const json& model_definition, const std::string& message) {
  ExpectRefused(model_definition, StatusCode::kInvalidArgument, message);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::vector<std::string> FilesIn(const std::string& directory) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

// The stored file of `digest` ("sha256:<hex>").
std::string StoredPath(const std::string& directory, const std::string& digest) {
  return directory + "/" + digest.substr(std::string("sha256:").size());
}

json NestedContext() {
  std::string binary("\x00\x01\xff\xfe\n", 5);
  return json::array({
      DirectoryEntry("model"),
      FileEntry("train.py", "print('hello')\n"),
      DirectoryEntry("model/layers/"),
      FileEntry("model/layers/conv.py", "import torch\n"),
      FileEntry("model/weights.bin", binary, 0100600),
      FileEntry("startup-hook.sh", "export A=1\n", 0100755),
      FileEntry("empty", ""),
      FileEntry("one", "x"),
      FileEntry("two", "xy"),
  });
}

TEST(DecodeModelDefinition, DecodesFilesSortedAndDropsDirectories) {
  const std::vector<ContextFile> files = MustDecode(NestedContext());
  std::vector<std::string> paths;
  for (const auto& file : files) paths.push_back(file.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"empty", "model/layers/conv.py", "model/weights.bin",
                                             "one", "startup-hook.sh", "train.py", "two"}));
  ASSERT_EQ(files.size(), 7u);
  EXPECT_EQ(files[0].content, "");
  EXPECT_EQ(files[0].mode, 0644u);
  EXPECT_EQ(files[2].content, std::string("\x00\x01\xff\xfe\n", 5));
  EXPECT_EQ(files[2].mode, 0600u);
  EXPECT_EQ(files[3].content, "x");
  EXPECT_EQ(files[4].mode, 0755u);
  EXPECT_EQ(files[5].content, "print('hello')\n");
  EXPECT_EQ(files[6].content, "xy");
}

// Clients that omit `type`, send the old tar '\0' type, or leave mode 0 get plain 0644 files.
TEST(DecodeModelDefinition, DefaultsForSparseClients) {
  const auto files = MustDecode(json::array({
      {{"path", "a.py"}, {"content", Base64("a")}},
      {{"path", "b.py"}, {"content", Base64("b")}, {"type", 0}, {"mode", 0}},
      {{"path", "c.py"}, {"content", Base64("c")}, {"type", nullptr}, {"mode", nullptr}},
      {{"path", "d.py"}},
  }));
  ASSERT_EQ(files.size(), 4u);
  for (const auto& file : files) EXPECT_EQ(file.mode, 0644u) << file.path;
  EXPECT_EQ(files[2].content, "c");
  EXPECT_EQ(files[3].content, "");
}

TEST(DecodeModelDefinition, EmptyArrayIsAnEmptyContext) {
  EXPECT_TRUE(MustDecode(json::array()).empty());
}

TEST(DecodeModelDefinition, RefusesMalformedEntries) {
  ExpectInvalid(json::object(), "modelDefinition: not an array of files");
  ExpectInvalid(json::array({FileEntry("a", "a"), 7}), "modelDefinition: entry 1 is not an object");
  ExpectInvalid(json::array({{{"content", ""}}}),
                "modelDefinition: entry 0 has no string \"path\"");
  ExpectInvalid(json::array({{{"path", 3}}}), "modelDefinition: entry 0 has no string \"path\"");
  ExpectInvalid(json::array({{{"path", "a"}, {"type", "0"}}}),
                "modelDefinition: path 'a': \"type\" is not an integer");
  ExpectInvalid(json::array({{{"path", "a"}, {"mode", 420.5}}}),
                "modelDefinition: path 'a': \"mode\" is not an integer");
  ExpectInvalid(json::array({{{"path", "a"}, {"mode", -1}}}),
                "modelDefinition: path 'a': mode -1 is not a file mode");
  ExpectInvalid(json::array({{{"path", "a"}, {"content", 5}}}),
                "modelDefinition: path 'a': \"content\" is not a string");
}

TEST(DecodeModelDefinition, AModeNeverMakesALinkOrAWritableFileForOthers) {
  // 0120777: a symbolic link's mode on an entry that claims to be a regular file.
  ExpectInvalid(json::array({FileEntry("a", "a", 0120777)}),
                "modelDefinition: path 'a': mode 41471 is not a regular file's (only regular "
                "files and directories are allowed)");
  ExpectInvalid(json::array({FileEntry("dev", "", 0060644)}),
                "modelDefinition: path 'dev': mode 24996 is not a regular file's (only regular "
                "files and directories are allowed)");
  // 0100777 and 0666: group and others lose write; the owner keeps what it had.
  auto files = MustDecode(
      json::array({FileEntry("run.sh", "x", 0100777), FileEntry("data.txt", "y", 0666)}));
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].mode, 0644u);  // data.txt (sorted first)
  EXPECT_EQ(files[1].mode, 0755u);  // run.sh
}

TEST(DecodeModelDefinition, RefusesBadBase64) {
  const std::string message =
      "modelDefinition: path 'a': \"content\" is not padded standard base64";
  for (const char* content : {"YQ", "YQ=", "Y*==", "YQ==YQ==", "Y=Q=", "=YQ=", "====", "YQ\n==",
                              " YQ==", "YQ==\n", "YWJj\nZGVm", "-_-_"}) {
    SCOPED_TRACE(content);
    ExpectInvalid(json::array({{{"path", "a"}, {"content", content}}}), message);
  }
}

TEST(DecodeModelDefinition, RefusesPathsThatLeaveTheContext) {
  const auto refuse = [](const std::string& path, const std::string& message) {
    SCOPED_TRACE(path);
    ExpectInvalid(json::array({FileEntry(path, "x")}), "modelDefinition: " + message);
  };
  refuse("", "a path is empty");
  refuse("/etc/passwd", "path '/etc/passwd' is absolute");
  refuse("../secret", "path '../secret' has a '..' component");
  refuse("model/../../secret", "path 'model/../../secret' has a '..' component");
  refuse("model/..", "path 'model/..' has a '..' component");
  refuse("model//train.py", "path 'model//train.py' has an empty component");
  refuse("model/", "path 'model/' has an empty component");
  refuse("./train.py", "path './train.py' has a '.' component");
  refuse("model/./train.py", "path 'model/./train.py' has a '.' component");
  refuse(std::string("a\0b", 3), "path '" + std::string("a\0b", 3) + "' contains a NUL byte");
  ExpectInvalid(json::array({DirectoryEntry("../up")}),
                "modelDefinition: path '../up' has a '..' component");
  ExpectInvalid(json::array({DirectoryEntry("/")}), "modelDefinition: path '/' is absolute");
}

TEST(DecodeModelDefinition, RefusesDuplicatesAndFileDirectoryClashes) {
  ExpectInvalid(
      json::array({FileEntry("a.py", "1"), FileEntry("b.py", "2"), FileEntry("a.py", "3")}),
      "modelDefinition: path 'a.py' is listed twice");
  ExpectInvalid(json::array({DirectoryEntry("model"), DirectoryEntry("model/")}),
                "modelDefinition: path 'model' is listed twice");
  ExpectInvalid(json::array({FileEntry("model", "1"), DirectoryEntry("model")}),
                "modelDefinition: path 'model' is listed twice");
  ExpectInvalid(json::array({FileEntry("model", "1"), FileEntry("model.py", "2"),
                             FileEntry("model/train.py", "3")}),
                "modelDefinition: path 'model' is a file, but 'model/train.py' needs it to be a "
                "directory");
}

TEST(DecodeModelDefinition, RefusesLinksAndOtherEntryTypes) {
  for (int link_type : {49, 50}) {
    json entry = FileEntry("model/latest", "");
    entry["type"] = link_type;
    ExpectInvalid(json::array({FileEntry("train.py", "x"), entry}),
                  "modelDefinition: path 'model/latest': links are not allowed in the model "
                  "definition");
  }
  for (int other_type : {51, 52, 54, 55, int{'x'}, int{'g'}}) {
    json entry = FileEntry("device", "");
    entry["type"] = other_type;
    ExpectInvalid(json::array({entry}),
                  "modelDefinition: path 'device': entry type " + std::to_string(other_type) +
                      " is not supported (only regular files and directories)");
  }
}

// The cap is Determined's 95 MiB of decoded content, checked before anything is decoded: one
// byte over it, split across two files, is refused. Base64 of zero bytes is all 'A's, which is
// cheap to build; the strings are moved into the JSON so each exists once.
TEST(DecodeModelDefinition, RefusesContextsOverTheCap) {
  ASSERT_EQ(kMaxContextBytes, 99614720);
  const int64_t first_bytes = 48ll * 1024 * 1024;
  const int64_t second_bytes = kMaxContextBytes + 1 - first_bytes;
  ASSERT_EQ(first_bytes % 3, 0);
  ASSERT_EQ(second_bytes % 3, 0);
  json model_definition = json::array();
  model_definition.push_back(
      {{"path", "data/first.bin"}, {"content", std::string(first_bytes / 3 * 4, 'A')}});
  model_definition.push_back(
      {{"path", "data/second.bin"}, {"content", std::string(second_bytes / 3 * 4, 'A')}});
  ExpectRefused(model_definition, StatusCode::kResourceExhausted,
                "modelDefinition: the files total 99614721 bytes (95.0 MiB), over the 95 MiB cap");

  // It is the total that is refused: the first file with a one-byte second one is accepted.
  model_definition[1]["content"] = "AA==";
  auto small = DecodeModelDefinition(model_definition);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ((*small)[0].content.size(), static_cast<size_t>(first_bytes));
  EXPECT_EQ((*small)[1].content, std::string(1, '\0'));
}

// PEDL's local packages: kept beside the model definition under .cairn-packages/.
TEST(AddPackages, PutsPackagesBesideTheModelDefinition) {
  std::vector<ContextFile> context = {{"model_def.py", "class T: pass\n", 0644},
                                      {"zz/data.bin", "xyz", 0600}};
  std::vector<ContextFile> packages = {{"features-1.0-py3-none-any.whl", "PK-wheel", 0644},
                                       {"legacy-0.1.tar.gz", "sdist", 0644}};
  auto combined = AddPackages(context, packages);
  ASSERT_TRUE(combined.ok()) << combined.status().ToString();
  std::vector<std::string> paths;
  for (const auto& file : *combined) paths.push_back(file.path);
  EXPECT_EQ(paths, (std::vector<std::string>{".cairn-packages/features-1.0-py3-none-any.whl",
                                             ".cairn-packages/legacy-0.1.tar.gz", "model_def.py",
                                             "zz/data.bin"}));
  EXPECT_EQ((*combined)[0].content, "PK-wheel");
  EXPECT_EQ((*combined)[3].mode, 0600u);
}

TEST(AddPackages, RefusesWhatIsNoPackageAndAModelDefinitionUsingTheirDirectory) {
  std::vector<ContextFile> context = {{"model_def.py", "", 0644}};
  for (const char* name : {"notes.txt", "wheel.whl.exe", "dir/features-1.0-py3-none-any.whl"}) {
    auto refused = AddPackages(context, {{name, "x", 0644}});
    ASSERT_FALSE(refused.ok()) << name;
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(refused.status().message(),
              "packages: '" + std::string(name) +
                  "' must be a file name (no directory) ending in .whl, .tar.gz, .tar.bz2 or "
                  ".zip: a Python wheel or source distribution");
  }
  auto clash = AddPackages({{".cairn-packages/mine.whl", "", 0644}}, {});
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.status().message(),
            "modelDefinition: '.cairn-packages/mine.whl' is in .cairn-packages/, which holds the "
            "experiment's packages; rename it");
}

TEST(AddPackages, RefusesAModelDefinitionAndPackagesOverTheCapNamingBothSizes) {
  ASSERT_EQ(kMaxContextWithPackagesBytes, 100663296);  // PEDL's 96 MB, as MiB
  const size_t context_bytes = 40ll * 1024 * 1024;
  const size_t package_bytes = kMaxContextWithPackagesBytes - context_bytes;
  std::vector<ContextFile> context = {{"data.bin", std::string(context_bytes, 'c'), 0644}};
  // Exactly at the cap is accepted; one byte more is not.
  EXPECT_TRUE(AddPackages(context, {{"big.whl", std::string(package_bytes, 'p'), 0644}}).ok());
  auto refused = AddPackages(context, {{"big.whl", std::string(package_bytes + 1, 'p'), 0644}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().message(),
            "the model definition (41943040 bytes, 40.0 MiB) and its packages (58720257 bytes, "
            "56.0 MiB) total 100663297 bytes, 96.0 MiB, over the 96 MiB cap");
}

TEST(DecodeModelDefinition, RefusesTooManyEntries) {
  json model_definition = json::array();
  for (size_t i = 0; i <= kMaxContextEntries; ++i) {
    model_definition.push_back({{"path", "d" + std::to_string(i)}, {"type", 53}});
  }
  ExpectRefused(model_definition, StatusCode::kResourceExhausted,
                "modelDefinition: 100001 entries, over the limit of 100000");
  model_definition.erase(model_definition.size() - 1);
  EXPECT_TRUE(MustDecode(model_definition).empty());
}

TEST(ContextStore, RoundTripsNestedPathsAndModes) {
  testing::TempDir temp;
  ContextStore store(temp.Sub("contexts"));
  const std::vector<ContextFile> files = MustDecode(NestedContext());
  auto stored = store.Put(files);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->digest.substr(0, 7), "sha256:");
  EXPECT_EQ(stored->digest.size(), 7u + 64u);
  EXPECT_EQ(stored->file_count, 7u);
  EXPECT_EQ(stored->total_bytes, 15 + 13 + 5 + 11 + 0 + 1 + 2);

  auto back = store.Get(stored->digest);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ((*back)[i].path, files[i].path);
    EXPECT_EQ((*back)[i].content, files[i].content);
    EXPECT_EQ((*back)[i].mode, files[i].mode);
  }

  auto harness_json = store.GetHarnessJson(stored->digest);
  ASSERT_TRUE(harness_json.ok()) << harness_json.status().ToString();
  const json harness = json::parse(*harness_json);
  ASSERT_EQ(harness.size(), 1u);
  ASSERT_EQ(harness["files"].size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const json& entry = harness["files"][i];
    EXPECT_EQ(entry.size(), 3u);
    EXPECT_EQ(entry["path"], files[i].path);
    EXPECT_EQ(entry["content"], Base64(files[i].content));
    EXPECT_EQ(entry["mode"], files[i].mode);
  }
  EXPECT_EQ(harness["files"][4]["path"], "startup-hook.sh");
  EXPECT_EQ(harness["files"][4]["mode"], 493);
}

TEST(ContextStore, EmptyContextRoundTrips) {
  testing::TempDir temp;
  ContextStore store(temp.Sub("contexts"));
  auto stored = store.Put({});
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->file_count, 0u);
  auto harness_json = store.GetHarnessJson(stored->digest);
  ASSERT_TRUE(harness_json.ok()) << harness_json.status().ToString();
  EXPECT_EQ(*harness_json, R"({"files":[]})");
}

// The encoding is a stored format: its digest must not drift, or stored contexts are orphaned.
TEST(ContextStore, DigestIsSha256OfTheDocumentedEncoding) {
  testing::TempDir temp;
  ContextStore store(temp.path());
  auto stored = store.Put({{"b", "yz", 0755}, {"a", "x", 0644}});
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  const std::string expected_encoding =
      std::string("cairn-context-v1\n") + std::string("\0\0\0\0\0\0\0\2", 8) +     // two files
      std::string("\0\0\0\0\0\0\0\1", 8) + "a" + std::string("\0\0\x01\xa4", 4) +  // 0644
      std::string("\0\0\0\0\0\0\0\1", 8) + "x" + std::string("\0\0\0\0\0\0\0\1", 8) + "b" +
      std::string("\0\0\x01\xed", 4) +  // 0755
      std::string("\0\0\0\0\0\0\0\2", 8) + "yz";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  ASSERT_EQ(EVP_Digest(expected_encoding.data(), expected_encoding.size(), digest, &length,
                       EVP_sha256(), nullptr),
            1);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    static constexpr char kHex[] = "0123456789abcdef";
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  EXPECT_EQ(stored->digest, "sha256:" + hex);
  EXPECT_EQ(ReadAll(StoredPath(temp.path(), stored->digest)), expected_encoding);
}

TEST(ContextStore, StoresEachContextOnce) {
  testing::TempDir temp;
  const std::string directory = temp.Sub("contexts");
  ContextStore store(directory);
  const auto files = MustDecode(NestedContext());
  auto first = store.Put(files);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const auto written = std::filesystem::last_write_time(StoredPath(directory, first->digest));
  auto second = store.Put(files);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->digest, first->digest);
  EXPECT_EQ(FilesIn(directory), std::vector<std::string>{first->digest.substr(7)});
  EXPECT_EQ(std::filesystem::last_write_time(StoredPath(directory, first->digest)), written);

  auto other = store.Put({{"train.py", "other", 0644}});
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_NE(other->digest, first->digest);
  EXPECT_EQ(FilesIn(directory).size(), 2u);
}

TEST(ContextStore, ConcurrentPutsOfOneContextAgree) {
  testing::TempDir temp;
  const std::string directory = temp.Sub("contexts");
  ContextStore store(directory);
  const auto files = MustDecode(NestedContext());
  std::vector<std::string> digests(8);
  std::vector<std::thread> threads;
  for (auto& digest : digests) {
    threads.emplace_back([&store, &files, &digest] {
      auto stored = store.Put(files);
      digest = stored.ok() ? stored->digest : stored.status().ToString();
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& digest : digests) EXPECT_EQ(digest, digests[0]);
  EXPECT_EQ(FilesIn(directory), std::vector<std::string>{digests[0].substr(7)});
}

TEST(ContextStore, DigestIgnoresInputOrderAndClientMetadata) {
  testing::TempDir temp;
  ContextStore store(temp.path());
  json forward = NestedContext();
  json reversed = json::array();
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    json entry = *it;
    entry["mtime"] = "1";  // neither mtime nor uid changes the context
    entry["uid"] = 1000;
    reversed.push_back(entry);
  }
  auto a = store.Put(MustDecode(forward));
  auto b = store.Put(MustDecode(reversed));
  std::vector<ContextFile> unsorted = MustDecode(forward);
  std::swap(unsorted.front(), unsorted.back());
  auto c = store.Put(unsorted);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->digest, b->digest);
  EXPECT_EQ(a->digest, c->digest);

  // Mode bits beyond the permissions are dropped, so 0100644 and 0644 are one context.
  auto with_type_bits = store.Put(MustDecode(json::array({FileEntry("a", "x", 0100644)})));
  auto bare = store.Put(MustDecode(json::array({FileEntry("a", "x", 0644)})));
  ASSERT_TRUE(with_type_bits.ok() && bare.ok());
  EXPECT_EQ(with_type_bits->digest, bare->digest);
}

TEST(ContextStore, DigestSeesEveryField) {
  testing::TempDir temp;
  ContextStore store(temp.path());
  const auto digest = [&store](const std::vector<ContextFile>& files) {
    auto stored = store.Put(files);
    EXPECT_TRUE(stored.ok()) << stored.status().ToString();
    return stored.ok() ? stored->digest : "";
  };
  const std::string base = digest({{"ab", "c", 0644}});
  EXPECT_NE(digest({{"ab", "c", 0755}}), base);
  EXPECT_NE(digest({{"ab", "d", 0644}}), base);
  EXPECT_NE(digest({{"a", "bc", 0644}}), base);  // the length prefixes keep these apart
  EXPECT_NE(digest({{"ab", "c", 0644}, {"x", "", 0644}}), base);
}

TEST(ContextStore, PutRefusesInvalidFiles) {
  testing::TempDir temp;
  ContextStore store(temp.Sub("contexts"));
  const auto refuse = [&store](const std::vector<ContextFile>& files, const std::string& message) {
    auto stored = store.Put(files);
    ASSERT_FALSE(stored.ok()) << message;
    EXPECT_EQ(stored.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(stored.status().message(), message);
  };
  refuse({{"a", "1", 0644}, {"a", "2", 0644}}, "context: path 'a' is listed twice");
  refuse({{"../a", "1", 0644}}, "context: path '../a' has a '..' component");
  refuse({{"a", "1", 0100644}}, "context: path 'a' has a mode beyond the permission bits");
  refuse({{"a", "1", 0644}, {"a/b", "2", 0644}},
         "context: path 'a' is a file, but 'a/b' needs it to be a directory");
  EXPECT_FALSE(std::filesystem::exists(temp.Sub("contexts")));
}

TEST(ContextStore, GetRefusesMissingAndMalformedDigests) {
  testing::TempDir temp;
  ContextStore store(temp.Sub("contexts"));
  const std::string absent = "sha256:" + std::string(64, '0');
  auto missing = store.Get(absent);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "context " + absent + " is not stored");
  EXPECT_EQ(store.GetHarnessJson(absent).status().code(), StatusCode::kNotFound);

  for (const std::string& digest :
       {std::string(""), std::string(64, '0'), "sha1:" + std::string(64, '0'),
        "sha256:" + std::string(63, '0'), "sha256:" + std::string(64, 'A'),
        "sha256:../../../../etc/passwd" + std::string(36, 'a')}) {
    SCOPED_TRACE(digest);
    auto refused = store.Get(digest);
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(refused.status().message(),
              "context digest '" + digest + "' is not sha256: followed by 64 lowercase hex digits");
  }
}

TEST(ContextStore, DetectsDamagedFiles) {
  testing::TempDir temp;
  ContextStore store(temp.path());
  auto stored = store.Put(MustDecode(NestedContext()));
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  const std::string path = StoredPath(temp.path(), stored->digest);
  const std::string original = ReadAll(path);

  std::string flipped = original;
  flipped[flipped.size() / 2] ^= 0x01;
  WriteAll(path, flipped);
  auto damaged = store.Get(stored->digest);
  EXPECT_EQ(damaged.status().code(), StatusCode::kCorruption) << damaged.status().ToString();
  EXPECT_NE(damaged.status().message().find("context " + stored->digest + ": " + path +
                                            " hashes to sha256:"),
            std::string::npos)
      << damaged.status().message();
  EXPECT_EQ(store.GetHarnessJson(stored->digest).status().code(), StatusCode::kCorruption);

  WriteAll(path, original.substr(0, original.size() - 1));
  EXPECT_EQ(store.Get(stored->digest).status().code(), StatusCode::kCorruption);

  // A torn copy has a different size, so the next Put of the context replaces it.
  auto again = store.Put(MustDecode(NestedContext()));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(store.Get(stored->digest).ok());
}

}  // namespace
}  // namespace cairn
