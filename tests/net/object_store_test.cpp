// The master's object-store clients against real protocol servers on loopback: s3rver for S3 and
// azurite, Microsoft's own emulator, for Azure Blob (azurite checks every Shared Key signature;
// s3rver checks the access key only, so Signature Version 4 is checked against AWS's values in
// object_store_signing_test).
#include <gtest/gtest.h>

#include "net/azure_blob_client.h"
#include "net/s3_client.h"
#include "tests/support/object_store_servers.h"

namespace cairn::net {
namespace {

using testing::AzureBlobServer;
using testing::S3Server;
using testing::TempDir;

// What every store must do: list by prefix in key order, read ranges, write, delete (twice).
void ExpectStoreBehaves(ObjectStore& store) {
  const std::string big(300000, 'x');
  ASSERT_TRUE(store.Put("pre fix/uuid-1/model/weights.bin", big).ok());
  ASSERT_TRUE(store.Put("pre fix/uuid-1/metadata.json", "{\"steps\": 3}").ok());
  ASSERT_TRUE(store.Put("pre fix/uuid-10/other", "o").ok());
  ASSERT_TRUE(store.Put("elsewhere", "e").ok());

  auto listed = store.List("pre fix/uuid-1/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].key, "pre fix/uuid-1/metadata.json");
  EXPECT_EQ((*listed)[0].size, 12u);
  EXPECT_EQ((*listed)[1].key, "pre fix/uuid-1/model/weights.bin");
  EXPECT_EQ((*listed)[1].size, big.size());

  auto piece = store.ReadRange("pre fix/uuid-1/metadata.json", 2, 5);
  ASSERT_TRUE(piece.ok()) << piece.status().ToString();
  EXPECT_EQ(*piece, "steps");
  auto tail = store.ReadRange("pre fix/uuid-1/model/weights.bin", big.size() - 10, 100);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(*tail, std::string(10, 'x'));

  ASSERT_TRUE(store.Delete("pre fix/uuid-1/metadata.json").ok());
  ASSERT_TRUE(store.Delete("pre fix/uuid-1/metadata.json").ok()) << "a second delete is fine";
  auto after = store.List("pre fix/");
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), 2u);
  EXPECT_EQ((*after)[0].key, "pre fix/uuid-1/model/weights.bin");
  EXPECT_EQ((*after)[1].key, "pre fix/uuid-10/other");

  auto missing = store.ReadRange("pre fix/none", 0, 10);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(S3Client, ListsReadsWritesAndDeletesAgainstS3rver) {
  TempDir dir;
  auto server = S3Server::Start(dir.Sub("s3"), "ckpt");
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto store = OpenS3({(*server)->endpoint(), "us-east-1", "ckpt"},
                      {S3Server::kAccessKey, S3Server::kSecretKey, ""});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ExpectStoreBehaves(**store);
}

TEST(S3Client, PagesThroughLongListings) {
  TempDir dir;
  auto server = S3Server::Start(dir.Sub("s3"), "ckpt");
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto store = OpenS3({(*server)->endpoint(), "us-east-1", "ckpt"},
                      {S3Server::kAccessKey, S3Server::kSecretKey, ""});
  ASSERT_TRUE(store.ok());
  // s3rver pages at 1000 keys, as S3 does.
  constexpr int kObjects = 1005;
  for (int i = 0; i < kObjects; ++i) {
    ASSERT_TRUE((*store)->Put("many/" + std::to_string(i), "").ok());
  }
  auto listed = (*store)->List("many/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->size(), static_cast<size_t>(kObjects));
}

TEST(S3Client, AnUnknownAccessKeyIsPermissionDenied) {
  TempDir dir;
  auto server = S3Server::Start(dir.Sub("s3"), "ckpt");
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto store = OpenS3({(*server)->endpoint(), "us-east-1", "ckpt"}, {"NOBODY", "secret", ""});
  ASSERT_TRUE(store.ok());
  auto listed = (*store)->List("");
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), StatusCode::kPermissionDenied) << listed.status().ToString();
  EXPECT_EQ(listed.status().message().find("secret"), std::string::npos);
}

TEST(AzureBlobClient, ListsReadsWritesAndDeletesAgainstAzurite) {
  TempDir dir;
  auto server = AzureBlobServer::Start(dir.Sub("azurite"));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto account = ParseAzureConnectionString((*server)->connection_string());
  ASSERT_TRUE(account.ok());
  ASSERT_TRUE(CreateAzureContainer(*account, "ckpt").ok());
  ASSERT_TRUE(CreateAzureContainer(*account, "ckpt").ok()) << "a second create is fine";
  auto store = OpenAzureBlob(*account, "ckpt");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ExpectStoreBehaves(**store);
}

TEST(AzureBlobClient, AWrongAccountKeyFailsAzuritesSignatureCheck) {
  TempDir dir;
  auto server = AzureBlobServer::Start(dir.Sub("azurite"));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto account = ParseAzureConnectionString((*server)->connection_string());
  ASSERT_TRUE(account.ok());
  ASSERT_TRUE(CreateAzureContainer(*account, "ckpt").ok());
  AzureAccount wrong = *account;
  wrong.key_base64 = "d3Jvbmcga2V5IGZvciB0aGUgdGVzdA==";
  auto store = OpenAzureBlob(wrong, "ckpt");
  ASSERT_TRUE(store.ok());
  Status put = (*store)->Put("a", "b");
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.code(), StatusCode::kPermissionDenied) << put.ToString();
}

}  // namespace
}  // namespace cairn::net
