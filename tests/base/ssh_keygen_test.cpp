// base/ssh_keys.h read by OpenSSH itself: ssh-keygen derives the same public key from the private
// key file, fingerprints the public one, and signs with the private key what the public key then
// verifies. ops/install-deps.sh installs openssh-client.
#include <gtest/gtest.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>

#include "base/encoding.h"
#include "base/files.h"
#include "base/ssh_keys.h"
#include "base/task_secrets.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using testing::FinishedProcess;
using testing::RunToEnd;
using testing::TempDir;

constexpr auto kTimeout = std::chrono::seconds(30);

bool SshKeygenIsInstalled() {
  const char* path = std::getenv("PATH");
  std::istringstream directories(path ? path : "");
  std::string directory;
  while (std::getline(directories, directory, ':')) {
    if (access((directory + "/ssh-keygen").c_str(), X_OK) == 0) return true;
  }
  return false;
}

class SshKeygenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(SshKeygenIsInstalled())
        << "ssh-keygen is not on PATH: install openssh-client (ops/install-deps.sh does)";
    auto pair =
        SshKeyPairFromSeed(DeriveTaskSecret("agent-token", "ssh", "task-7"), "task-7@cairn");
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    pair_ = *pair;
    // ssh-keygen refuses a private key that others may read.
    ASSERT_TRUE(WriteFileAtomically(private_path(), pair_.private_key, 0600).ok());
    ASSERT_TRUE(WriteFileAtomically(public_path(), pair_.public_key + "\n", 0644).ok());
  }
  std::string private_path() const { return dir_.Sub("id_ed25519"); }
  std::string public_path() const { return dir_.Sub("id_ed25519.pub"); }

  TempDir dir_;
  SshKeyPair pair_;
};

TEST_F(SshKeygenTest, ReadsThePublicKeyOutOfThePrivateKeyFile) {
  FinishedProcess derived = RunToEnd({"ssh-keygen", "-y", "-f", private_path()}, kTimeout);
  ASSERT_EQ(derived.exit_code, 0) << derived.Text();
  ASSERT_EQ(derived.lines.size(), 1u) << derived.Text();
  EXPECT_EQ(derived.lines[0], pair_.public_key);
}

TEST_F(SshKeygenTest, FingerprintsThePublicKey) {
  // OpenSSH's fingerprint: SHA-256 of the key blob in base64 without its padding.
  const std::string blob_base64 = pair_.public_key.substr(12, pair_.public_key.rfind(' ') - 12);
  auto blob = Base64Decode(blob_base64);
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(blob->data()), blob->size(), digest);
  std::string fingerprint = Base64Encode(std::string(reinterpret_cast<char*>(digest), 32));
  while (fingerprint.back() == '=') fingerprint.pop_back();

  FinishedProcess listed = RunToEnd({"ssh-keygen", "-l", "-f", public_path()}, kTimeout);
  ASSERT_EQ(listed.exit_code, 0) << listed.Text();
  ASSERT_EQ(listed.lines.size(), 1u) << listed.Text();
  EXPECT_EQ(listed.lines[0], "256 SHA256:" + fingerprint + " task-7@cairn (ED25519)");
}

TEST_F(SshKeygenTest, WhatThePrivateKeySignsThePublicKeyVerifies) {
  const std::string data = dir_.Sub("data");
  ASSERT_TRUE(WriteFileAtomically(data, "a message to sign\n").ok());
  FinishedProcess signing =
      RunToEnd({"ssh-keygen", "-Y", "sign", "-f", private_path(), "-n", "file", data}, kTimeout);
  ASSERT_EQ(signing.exit_code, 0) << signing.Text();

  const std::string allowed = dir_.Sub("allowed_signers");
  ASSERT_TRUE(WriteFileAtomically(allowed, "task-7@cairn " + pair_.public_key + "\n").ok());
  const std::vector<std::string> verify = {"/bin/sh",
                                           "-c",
                                           "ssh-keygen -Y verify -f \"$1\" -I task-7@cairn -n "
                                           "file -s \"$2.sig\" < \"$2\"",
                                           "verify",
                                           allowed,
                                           data};
  FinishedProcess verified = RunToEnd(verify, kTimeout);
  EXPECT_EQ(verified.exit_code, 0) << verified.Text();

  // The check has teeth: another task's key does not verify the signature.
  auto other = SshKeyPairFromSeed(DeriveTaskSecret("agent-token", "ssh", "task-8"), "other");
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(WriteFileAtomically(allowed, "task-7@cairn " + other->public_key + "\n").ok());
  FinishedProcess refused = RunToEnd(verify, kTimeout);
  EXPECT_NE(refused.exit_code, 0) << refused.Text();
}

}  // namespace
}  // namespace cairn
