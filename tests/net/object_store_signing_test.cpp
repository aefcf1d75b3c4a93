// The object stores' request signing and listing parser on plain values: AWS Signature Version 4
// against AWS's documented example and values botocore computes, Azure connection strings, and
// the listing XML.
#include <gtest/gtest.h>

#include "net/azure_blob_client.h"
#include "net/s3_client.h"
#include "net/xml_scan.h"

namespace cairn::net {
namespace {

constexpr const char* kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const S3Credentials kExampleCredentials{"AKIAIOSFODNN7EXAMPLE",
                                        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};

TEST(SigV4, SignsAwsDocumentedGetObjectExample) {
  // "Example: GET Object" of AWS's Signature Version 4 documentation.
  const std::string authorization = SigV4Authorization(kExampleCredentials, "us-east-1", "s3",
                                                       "20130524T000000Z", "GET", "/test.txt", {},
                                                       {{"host", "examplebucket.s3.amazonaws.com"},
                                                        {"range", "bytes=0-9"},
                                                        {"x-amz-content-sha256", kEmptySha256},
                                                        {"x-amz-date", "20130524T000000Z"}},
                                                       kEmptySha256);
  EXPECT_EQ(authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4, SignsQueryParametersInSortedEncodedOrder) {
  // AWS's "GET Bucket (List Objects)" example: the query given out of order.
  const std::string authorization =
      SigV4Authorization(kExampleCredentials, "us-east-1", "s3", "20130524T000000Z", "GET", "/",
                         {{"prefix", "J"}, {"max-keys", "2"}},
                         {{"host", "examplebucket.s3.amazonaws.com"},
                          {"x-amz-content-sha256", kEmptySha256},
                          {"x-amz-date", "20130524T000000Z"}},
                         kEmptySha256);
  EXPECT_NE(authorization.find(
                "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"),
            std::string::npos)
      << authorization;
}

TEST(SigV4, SignsPathStyleKeysThatNeedEncodingAsBotocoreDoes) {
  // botocore's S3SigV4Auth on http://127.0.0.1:9000/ckpt/pre fix/a+b.txt?list-type=2&prefix=...
  const std::string path = S3UriEncode("/ckpt/pre fix/a+b.txt", /*keep_slash=*/true);
  EXPECT_EQ(path, "/ckpt/pre%20fix/a%2Bb.txt");
  const std::string authorization =
      SigV4Authorization(kExampleCredentials, "us-east-1", "s3", "20130524T000000Z", "GET", path,
                         {{"list-type", "2"}, {"prefix", "pre fix/"}},
                         {{"host", "127.0.0.1:9000"},
                          {"x-amz-content-sha256", kEmptySha256},
                          {"x-amz-date", "20130524T000000Z"}},
                         kEmptySha256);
  EXPECT_NE(authorization.find(
                "Signature=d850c2add678831cb95087079ecef1a4eb1e4822e5eadf4e0b273f763e0460f3"),
            std::string::npos)
      << authorization;
}

TEST(S3UriEncode, KeepsUnreservedBytesAndEncodesTheRest) {
  EXPECT_EQ(S3UriEncode("AZaz09-._~", false), "AZaz09-._~");
  EXPECT_EQ(S3UriEncode("a/b c", false), "a%2Fb%20c");
  EXPECT_EQ(S3UriEncode("a/b c", true), "a/b%20c");
  EXPECT_EQ(S3UriEncode("\xc3\xa9", false), "%C3%A9");
}

TEST(AzureConnectionString, ReadsAccountKeyAndEndpoint) {
  auto account = ParseAzureConnectionString(
      "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;EndpointSuffix=core."
      "windows.net");
  ASSERT_TRUE(account.ok()) << account.status().ToString();
  EXPECT_EQ(account->name, "acct");
  EXPECT_EQ(account->key_base64, "a2V5");
  EXPECT_EQ(account->blob_endpoint, "https://acct.blob.core.windows.net");

  auto emulator = ParseAzureConnectionString(
      "AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:10000/"
      "devstoreaccount1/;");
  ASSERT_TRUE(emulator.ok());
  EXPECT_EQ(emulator->blob_endpoint, "http://127.0.0.1:10000/devstoreaccount1");

  auto development = ParseAzureConnectionString("UseDevelopmentStorage=true");
  ASSERT_TRUE(development.ok());
  EXPECT_EQ(development->name, "devstoreaccount1");
}

TEST(AzureConnectionString, RefusesWhatItCannotSignWithWithoutEchoingTheString) {
  auto sas_only = ParseAzureConnectionString(
      "BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=sv=2021&sig=SECRET");
  ASSERT_FALSE(sas_only.ok());
  EXPECT_EQ(sas_only.status().code(), StatusCode::kNotSupported);
  EXPECT_EQ(sas_only.status().message().find("SECRET"), std::string::npos);

  auto malformed = ParseAzureConnectionString("AccountName=acct;garbage-SECRET");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().message().find("SECRET"), std::string::npos);

  auto bad_key = ParseAzureConnectionString("AccountName=acct;AccountKey=not base64!");
  EXPECT_FALSE(bad_key.ok());
}

TEST(AzureSharedKey, SignsTheCanonicalStringWithTheAccountKey) {
  const AzureAccount account{"acct", "a2V5", "https://acct.blob.core.windows.net"};
  auto first = AzureSharedKeyAuthorization(
      account, "GET", "/ckpt", {{"restype", "container"}, {"comp", "list"}},
      {{"x-ms-date", "Tue, 01 Dec 2026 00:00:00 GMT"}, {"x-ms-version", "2021-08-06"}});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->rfind("SharedKey acct:", 0), 0u) << *first;
  // Any signed part changes the signature.
  auto other = AzureSharedKeyAuthorization(
      account, "GET", "/ckpt", {{"restype", "container"}, {"comp", "list"}, {"prefix", "x"}},
      {{"x-ms-date", "Tue, 01 Dec 2026 00:00:00 GMT"}, {"x-ms-version", "2021-08-06"}});
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*first, *other);
}

TEST(XmlScan, ReadsListingEntriesAndDecodesEntities) {
  const std::string xml =
      "<?xml version=\"1.0\"?><ListBucketResult><KeyCount>2</KeyCount>"
      "<Contents><Key>a/b&amp;c</Key><Size>12</Size></Contents>"
      "<Contents><Key>a/&#x263A;&#65;</Key><Size>0</Size></Contents>"
      "<IsTruncated>false</IsTruncated></ListBucketResult>";
  auto entries = XmlElements(xml, "Contents");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(XmlText(entries[0], "Key").value_or(""), "a/b&c");
  EXPECT_EQ(XmlText(entries[0], "Size").value_or(""), "12");
  EXPECT_EQ(XmlText(entries[1], "Key").value_or(""),
            "a/\xe2\x98\xba"
            "A");
  // <KeyCount> is not <Key>.
  EXPECT_EQ(XmlText(xml, "Key").value_or(""), "a/b&c");
  EXPECT_EQ(XmlText(xml, "IsTruncated").value_or(""), "false");
  EXPECT_FALSE(XmlText(xml, "NextContinuationToken").has_value());
  EXPECT_FALSE(XmlText("<Key>&bogus;</Key>", "Key").has_value());
  EXPECT_FALSE(XmlText("<Key>&#0;</Key>", "Key").has_value());
  EXPECT_EQ(XmlElements("<NextMarker/>", "NextMarker").size(), 1u);
}

}  // namespace
}  // namespace cairn::net
