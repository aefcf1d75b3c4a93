// base/sealed_secrets.h: credentials sealed under the cluster secret open only under it, seal
// deterministically, and unseal wherever they sit inside a value.
#include "base/sealed_secrets.h"

#include <gtest/gtest.h>

#include <string>

namespace cairn {
namespace {

const SecretSealer kSealer("a-cluster-secret-of-some-length");

TEST(SealedSecretsTest, SealedValueHidesThePlaintextAndOpensBack) {
  const std::string sealed = kSealer.Seal("AKIA-secret/with+chars=");
  EXPECT_TRUE(IsSealed(sealed));
  EXPECT_EQ(sealed.find("AKIA"), std::string::npos);
  auto opened = kSealer.UnsealText(sealed);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(*opened, "AKIA-secret/with+chars=");
}

TEST(SealedSecretsTest, SealingIsDeterministicPerValueAndIdempotent) {
  EXPECT_EQ(kSealer.Seal("hunter2"), kSealer.Seal("hunter2"));
  EXPECT_NE(kSealer.Seal("hunter2"), kSealer.Seal("hunter3"));
  const std::string sealed = kSealer.Seal("hunter2");
  EXPECT_EQ(kSealer.Seal(sealed), sealed);  // sealing twice changes nothing
  // Another cluster secret seals the same value differently.
  EXPECT_NE(SecretSealer("another-cluster-secret-0000").Seal("hunter2"), sealed);
}

TEST(SealedSecretsTest, UnsealsEverySealedValueInsideText) {
  const std::string text = "TOKEN=" + kSealer.Seal("abc") + " and " + kSealer.Seal("");
  auto opened = kSealer.UnsealText(text);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(*opened, "TOKEN=abc and ");
  auto plain = kSealer.UnsealText("NAME=plain value");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, "NAME=plain value");
}

TEST(SealedSecretsTest, AnotherKeyOrAnAlteredValueIsRefusedWithoutNamingIt) {
  const std::string sealed = kSealer.Seal("s3cr3t-value");
  auto other = SecretSealer("another-cluster-secret-0000").UnsealText(sealed);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(other.status().message().find("another agent token"), std::string::npos);
  EXPECT_EQ(other.status().message().find("s3cr3t"), std::string::npos);

  std::string altered = sealed;
  const size_t last = kSealedPrefix.size() + 40;  // past the nonce, in the ciphertext
  altered[last] = altered[last] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(kSealer.UnsealText(altered).ok());
  EXPECT_FALSE(kSealer.UnsealText(std::string(kSealedPrefix) + "!!").ok());
  EXPECT_FALSE(kSealer.UnsealText(std::string(kSealedPrefix) + "AAAA").ok());  // too short
}

TEST(SealedSecretsTest, WithoutAKeyNothingIsSealedAndSealedValuesAreRefused) {
  const SecretSealer none;
  EXPECT_FALSE(none.has_key());
  EXPECT_EQ(none.Seal("plain"), "plain");
  EXPECT_FALSE(none.UnsealText(kSealer.Seal("x")).ok());
  EXPECT_TRUE(none.UnsealText("plain").ok());
  EXPECT_FALSE(SecretSealer("").has_key());
}

}  // namespace
}  // namespace cairn
