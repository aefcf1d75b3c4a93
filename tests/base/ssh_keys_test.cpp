// base/ssh_keys.h, read back byte by byte: the openssh-key-v1 layout of OpenSSH's PROTOCOL.key
// and RFC 8032's first Ed25519 test vector. ssh-keygen reading the files is in
// ssh_keygen_test.cpp.
#include "base/ssh_keys.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>

#include "base/encoding.h"

namespace cairn {
namespace {

std::string FromHex(std::string_view hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return bytes;
}

// RFC 8032 §7.1, TEST 1.
const std::string kRfcSeed =
    FromHex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
const std::string kRfcPublicKey =
    FromHex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");

// Reads SSH's wire encodings (RFC 4251 §5) off the front of a buffer.
class WireReader {
 public:
  explicit WireReader(std::string_view bytes) : rest_(bytes) {}
  uint32_t Uint32() {
    EXPECT_GE(rest_.size(), 4u);
    if (rest_.size() < 4) return 0;
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) value = value << 8 | static_cast<unsigned char>(rest_[i]);
    rest_.remove_prefix(4);
    return value;
  }
  std::string String() {
    const uint32_t size = Uint32();
    EXPECT_LE(size, rest_.size());
    std::string value(rest_.substr(0, size));
    rest_.remove_prefix(value.size());
    return value;
  }
  std::string Rest() { return std::string(rest_); }

 private:
  std::string_view rest_;
};

std::string SshString(std::string_view bytes) {
  const auto size = static_cast<uint32_t>(bytes.size());
  std::string out{static_cast<char>(size >> 24), static_cast<char>(size >> 16),
                  static_cast<char>(size >> 8), static_cast<char>(size)};
  return out.append(bytes);
}

// The binary inside the PEM armour; every line but the last is 70 characters, as ssh-keygen's.
std::string Unarmour(const std::string& pem) {
  std::istringstream lines(pem);
  std::string line, base64;
  std::getline(lines, line);
  EXPECT_EQ(line, "-----BEGIN OPENSSH PRIVATE KEY-----");
  std::string previous;
  while (std::getline(lines, line) && line != "-----END OPENSSH PRIVATE KEY-----") {
    if (!previous.empty()) {
      EXPECT_EQ(previous.size(), 70u) << previous;
    }
    EXPECT_LE(line.size(), 70u);
    base64 += line;
    previous = line;
  }
  EXPECT_EQ(line, "-----END OPENSSH PRIVATE KEY-----");
  auto binary = Base64Decode(base64);
  EXPECT_TRUE(binary.ok()) << binary.status().ToString();
  return binary.ok() ? *binary : "";
}

TEST(SshKeysTest, PrivateKeyFileHasTheOpensshKeyV1Layout) {
  auto pair = SshKeyPairFromSeed(kRfcSeed, "task-1@cairn");
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  ASSERT_EQ(pair->private_key.back(), '\n');

  const std::string public_blob = SshString("ssh-ed25519") + SshString(kRfcPublicKey);
  const std::string binary = Unarmour(pair->private_key);
  ASSERT_EQ(binary.substr(0, 15), std::string("openssh-key-v1\0", 15));
  WireReader file(std::string_view(binary).substr(15));
  EXPECT_EQ(file.String(), "none");  // cipher
  EXPECT_EQ(file.String(), "none");  // KDF
  EXPECT_EQ(file.String(), "");      // KDF options
  EXPECT_EQ(file.Uint32(), 1u);      // keys
  EXPECT_EQ(file.String(), public_blob);
  const std::string private_section = file.String();
  EXPECT_EQ(file.Rest(), "");

  EXPECT_EQ(private_section.size() % 8, 0u);
  WireReader section(private_section);
  const uint32_t check = section.Uint32();
  EXPECT_EQ(section.Uint32(), check);
  EXPECT_EQ(section.String(), "ssh-ed25519");
  EXPECT_EQ(section.String(), kRfcPublicKey);
  EXPECT_EQ(section.String(), kRfcSeed + kRfcPublicKey);  // OpenSSH keeps seed || public key
  EXPECT_EQ(section.String(), "task-1@cairn");
  const std::string padding = section.Rest();
  EXPECT_LT(padding.size(), 8u);
  for (size_t i = 0; i < padding.size(); ++i) {
    EXPECT_EQ(padding[i], static_cast<char>(i + 1));
  }
}

TEST(SshKeysTest, PublicKeyIsAnAuthorizedKeysLine) {
  auto pair = SshKeyPairFromSeed(kRfcSeed, "task-1@cairn");
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  EXPECT_EQ(pair->public_key,
            "ssh-ed25519 " + Base64Encode(SshString("ssh-ed25519") + SshString(kRfcPublicKey)) +
                " task-1@cairn");
  auto without_comment = SshKeyPairFromSeed(kRfcSeed, "");
  ASSERT_TRUE(without_comment.ok()) << without_comment.status().ToString();
  EXPECT_EQ(without_comment->public_key, pair->public_key.substr(0, pair->public_key.rfind(' ')));
}

TEST(SshKeysTest, TheSameSeedGivesTheSameBytesAndAnotherSeedOthers) {
  const std::string other_seed(32, '\x07');
  auto first = SshKeyPairFromSeed(kRfcSeed, "c");
  auto again = SshKeyPairFromSeed(kRfcSeed, "c");
  auto other = SshKeyPairFromSeed(other_seed, "c");
  ASSERT_TRUE(first.ok() && again.ok() && other.ok());
  EXPECT_EQ(first->private_key, again->private_key);
  EXPECT_EQ(first->public_key, again->public_key);
  EXPECT_NE(first->private_key, other->private_key);
  EXPECT_NE(first->public_key, other->public_key);
}

TEST(SshKeysTest, ASeedOfAnotherSizeOrAMultiLineCommentIsRefused) {
  for (size_t size : {0, 16, 31, 33, 64}) {
    auto pair = SshKeyPairFromSeed(std::string(size, 'x'), "c");
    ASSERT_FALSE(pair.ok()) << size;
    EXPECT_EQ(pair.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(pair.status().message().find("32 bytes"), std::string::npos)
        << pair.status().message();
  }
  auto pair = SshKeyPairFromSeed(kRfcSeed, "one\nline injected");
  ASSERT_FALSE(pair.ok());
  EXPECT_EQ(pair.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn
