// base/task_secrets.h: HMAC-SHA-256 against RFC 4231, and the per-task derivation's separations.
#include "base/task_secrets.h"

#include <gtest/gtest.h>

#include <string>

#include "base/encoding.h"

namespace cairn {
namespace {

std::string Hex(const std::string& bytes) {
  return HexLower(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

TEST(TaskSecretsTest, HmacSha256MatchesRfc4231) {
  // Test case 2: a key shorter than the block.
  EXPECT_EQ(Hex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a 131-byte key, which HMAC hashes first.
  EXPECT_EQ(Hex(HmacSha256(std::string(131, '\xaa'),
                           "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  // Test case 1: twenty 0x0b bytes.
  EXPECT_EQ(Hex(HmacSha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(TaskSecretsTest, TaskSecretIsTheHmacOfPurposeNulTaskId) {
  const std::string message = std::string("ssh") + '\0' + "task-1";
  const std::string secret = DeriveTaskSecret("cluster-secret", "ssh", "task-1");
  EXPECT_EQ(secret.size(), 32u);
  EXPECT_EQ(secret, HmacSha256("cluster-secret", message));
  // The same on every call (master and agent derive it apart).
  EXPECT_EQ(secret, DeriveTaskSecret("cluster-secret", "ssh", "task-1"));
}

TEST(TaskSecretsTest, EveryInputSeparatesSecrets) {
  const std::string secret = DeriveTaskSecret("cluster-secret", "ssh", "task-1");
  EXPECT_NE(secret, DeriveTaskSecret("cluster-secret", "ssh", "task-2"));
  EXPECT_NE(secret, DeriveTaskSecret("cluster-secret", "jupyter", "task-1"));
  EXPECT_NE(secret, DeriveTaskSecret("other-secret", "ssh", "task-1"));
  // Without the NUL these two would be the same message.
  EXPECT_NE(DeriveTaskSecret("k", "ab", "c"), DeriveTaskSecret("k", "a", "bc"));
}

TEST(TaskSecretsTest, TaskTokenIsTheHexOfTheSecretsFirstHalf) {
  const std::string secret = DeriveTaskSecret("cluster-secret", "jupyter", "task-1");
  const std::string token = DeriveTaskToken("cluster-secret", "jupyter", "task-1");
  EXPECT_EQ(token.size(), 32u);
  EXPECT_EQ(token, Hex(secret.substr(0, 16)));
  EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos);
}

}  // namespace
}  // namespace cairn
