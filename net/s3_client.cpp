#include "net/s3_client.h"

#include <algorithm>
#include <cstdlib>

#include "base/clock.h"
#include "base/encoding.h"
#include "base/http_url.h"
#include "base/task_secrets.h"
#include "net/http_client.h"
#include "net/xml_scan.h"

namespace cairn::net {

namespace {

constexpr const char* kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string Hex(const std::string& bytes) {
  return HexLower(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

// SHA-256 of text in memory cannot fail short of OpenSSL failing to start.
std::string HexSha256OrEmpty(const std::string& text) {
  auto digest = Sha256Hex(text);
  return digest.ok() ? *digest : std::string();
}

// The message of an S3 error answer (<Error><Code>..</Code><Message>..</Message>).
Status S3Error(const std::string& what, const ClientResponse& response) {
  return ObjectStoreError("S3 " + what, response.status, response.body);
}

class S3Store final : public ObjectStore {
 public:
  S3Store(Client client, std::string host_header, std::string region, std::string bucket,
          S3Credentials credentials)
      : client_(std::move(client)),
        host_header_(std::move(host_header)),
        region_(std::move(region)),
        bucket_(std::move(bucket)),
        credentials_(std::move(credentials)) {}

  Result<std::vector<StoredObject>> List(const std::string& prefix) override {
    // ListObjects (version 1), paged by marker: every S3-compatible store serves it the same way.
    std::vector<StoredObject> objects;
    std::string marker;
    while (true) {
      std::vector<std::pair<std::string, std::string>> query = {{"prefix", prefix}};
      if (!marker.empty()) query.emplace_back("marker", marker);
      CAIRN_ASSIGN_OR_RETURN(ClientResponse response, Send("GET", "", query, "", {}));
      if (response.status != 200) return S3Error("listing " + prefix, response);
      for (std::string_view entry : XmlElements(response.body, "Contents")) {
        auto key = XmlText(entry, "Key");
        auto size = XmlText(entry, "Size");
        if (!key || !size) return Status::Unavailable("S3 listing: an entry without Key or Size");
        objects.push_back({*key, std::strtoull(size->c_str(), nullptr, 10)});
      }
      if (XmlText(response.body, "IsTruncated").value_or("false") != "true") break;
      std::string next = XmlText(response.body, "NextMarker").value_or("");
      if (next.empty() && !objects.empty()) next = objects.back().key;
      if (next.empty() || next == marker) {
        return Status::Unavailable("S3 listing: truncated without a way to go on");
      }
      marker = std::move(next);
    }
    std::sort(objects.begin(), objects.end(),
              [](const StoredObject& a, const StoredObject& b) { return a.key < b.key; });
    return objects;
  }

  Result<std::string> ReadRange(const std::string& key, uint64_t offset, uint64_t length) override {
    if (length == 0) return std::string();
    CAIRN_ASSIGN_OR_RETURN(ClientResponse response,
                           Send("GET", key, {}, "", {{"range", ByteRange(offset, length)}}));
    return RangedReadAnswer("S3 reading " + key, std::move(response), offset, length);
  }

  Status Put(const std::string& key, const std::string& body) override {
    CAIRN_ASSIGN_OR_RETURN(ClientResponse response, Send("PUT", key, {}, body, {}));
    if (response.status != 200) return S3Error("writing " + key, response);
    return Status::Ok();
  }

  Status Delete(const std::string& key) override {
    CAIRN_ASSIGN_OR_RETURN(ClientResponse response, Send("DELETE", key, {}, "", {}));
    if (response.status == 204 || response.status == 200 || response.status == 404) {
      return Status::Ok();
    }
    return S3Error("deleting " + key, response);
  }

 private:
  Result<ClientResponse> Send(const std::string& method, const std::string& key,
                              std::vector<std::pair<std::string, std::string>> query,
                              const std::string& body,
                              std::map<std::string, std::string> extra_headers) {
    const std::string path = "/" + bucket_ + (key.empty() ? "" : "/" + key);
    const std::string encoded_path = S3UriEncode(path, /*keep_slash=*/true);
    std::sort(query.begin(), query.end());
    std::string target = encoded_path;
    for (size_t i = 0; i < query.size(); ++i) {
      target += (i == 0 ? "?" : "&") + S3UriEncode(query[i].first, false) + "=" +
                S3UriEncode(query[i].second, false);
    }
    std::string payload_sha256 = kEmptySha256;
    if (!body.empty()) {
      CAIRN_ASSIGN_OR_RETURN(payload_sha256, Sha256Hex(body));
    }
    std::map<std::string, std::string> headers = std::move(extra_headers);
    headers["host"] = host_header_;
    headers["x-amz-date"] = NowUtcFormatted("%Y%m%dT%H%M%SZ");
    headers["x-amz-content-sha256"] = payload_sha256;
    if (!credentials_.session_token.empty()) {
      headers["x-amz-security-token"] = credentials_.session_token;
    }
    headers["authorization"] =
        SigV4Authorization(credentials_, region_, "s3", headers["x-amz-date"], method, encoded_path,
                           query, headers, payload_sha256);
    return client_.Request(method, target, body, headers);
  }

  Client client_;
  std::string host_header_;
  std::string region_;
  std::string bucket_;
  S3Credentials credentials_;
};

}  // namespace

std::string S3UriEncode(const std::string& text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

std::string SigV4Authorization(const S3Credentials& credentials, const std::string& region,
                               const std::string& service, const std::string& amz_date,
                               const std::string& method, const std::string& encoded_path,
                               const std::vector<std::pair<std::string, std::string>>& query,
                               const std::map<std::string, std::string>& headers,
                               const std::string& payload_sha256) {
  std::vector<std::pair<std::string, std::string>> encoded_query;
  for (const auto& [name, value] : query) {
    encoded_query.emplace_back(S3UriEncode(name, false), S3UriEncode(value, false));
  }
  std::sort(encoded_query.begin(), encoded_query.end());
  std::string canonical_query;
  for (const auto& [name, value] : encoded_query) {
    if (!canonical_query.empty()) canonical_query += '&';
    canonical_query += name + "=" + value;
  }
  std::string canonical_headers;
  std::string signed_headers;
  for (const auto& [name, value] : headers) {  // std::map: sorted by name
    if (name == "authorization") continue;
    canonical_headers += name + ":" + value + "\n";
    if (!signed_headers.empty()) signed_headers += ';';
    signed_headers += name;
  }
  const std::string canonical_request = method + "\n" + encoded_path + "\n" + canonical_query +
                                        "\n" + canonical_headers + "\n" + signed_headers + "\n" +
                                        payload_sha256;
  const std::string date = amz_date.substr(0, 8);
  const std::string scope = date + "/" + region + "/" + service + "/aws4_request";
  const std::string string_to_sign =
      "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + HexSha256OrEmpty(canonical_request);
  std::string key = HmacSha256("AWS4" + credentials.secret_key, date);
  key = HmacSha256(key, region);
  key = HmacSha256(key, service);
  key = HmacSha256(key, "aws4_request");
  return "AWS4-HMAC-SHA256 Credential=" + credentials.access_key + "/" + scope +
         ", SignedHeaders=" + signed_headers +
         ", Signature=" + Hex(HmacSha256(key, string_to_sign));
}

Result<S3Credentials> S3CredentialsFromEnvironment() {
  const char* access = std::getenv("AWS_ACCESS_KEY_ID");
  const char* secret = std::getenv("AWS_SECRET_ACCESS_KEY");
  if (access == nullptr || secret == nullptr || *access == '\0' || *secret == '\0') {
    return Status::NotFound(
        "the storage names no access_key/secret_key and the master's environment has no "
        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY");
  }
  S3Credentials credentials{access, secret, ""};
  if (const char* token = std::getenv("AWS_SESSION_TOKEN")) credentials.session_token = token;
  return credentials;
}

Result<std::unique_ptr<ObjectStore>> OpenS3(const S3Location& location,
                                            const S3Credentials& credentials,
                                            const std::string& ca_file) {
  const std::string endpoint = location.endpoint_url.empty()
                                   ? "https://s3." + location.region + ".amazonaws.com"
                                   : location.endpoint_url;
  CAIRN_ASSIGN_OR_RETURN(HttpUrl url, ParseHttpUrl(endpoint));
  std::string host_header = HostHeaderOf(url);
  return std::unique_ptr<ObjectStore>(std::make_unique<S3Store>(
      Client(url.host, url.port, ObjectStoreClientOptions(url.tls, ca_file)),
      std::move(host_header), location.region, location.bucket, credentials));
}

}  // namespace cairn::net
