// An S3 client for the master's checkpoint work (garbage collection, deletion, downloads) against
// AWS S3 or any S3-compatible store: path-style requests signed with AWS Signature Version 4.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "net/object_store.h"

namespace cairn::net {

struct S3Credentials {
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // "" unless temporary credentials
};

struct S3Location {
  std::string endpoint_url;  // "" = AWS: https://s3.<region>.amazonaws.com
  std::string region = "us-east-1";
  std::string bucket;
};

// The Authorization header of a Signature Version 4 request (pure). `encoded_path` is the
// request's path already URI-encoded; `query` its parameters, raw; `headers` the signed headers
// by lowercase name (host, x-amz-date and x-amz-content-sha256 among them); `amz_date` the
// x-amz-date value (YYYYMMDDTHHMMSSZ); `payload_sha256` the hex SHA-256 of the body.
std::string SigV4Authorization(const S3Credentials& credentials, const std::string& region,
                               const std::string& service, const std::string& amz_date,
                               const std::string& method, const std::string& encoded_path,
                               const std::vector<std::pair<std::string, std::string>>& query,
                               const std::map<std::string, std::string>& headers,
                               const std::string& payload_sha256);

// RFC 3986 percent-encoding as S3 signs it: unreserved bytes kept, '/' kept when `keep_slash`.
std::string S3UriEncode(const std::string& text, bool keep_slash);

// Credentials from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN),
// for storage configs that name none; NotFound when unset.
Result<S3Credentials> S3CredentialsFromEnvironment();

// A client for `location`. `ca_file` as net::ClientOptions.
Result<std::unique_ptr<ObjectStore>> OpenS3(const S3Location& location,
                                            const S3Credentials& credentials,
                                            const std::string& ca_file = "");

}  // namespace cairn::net
