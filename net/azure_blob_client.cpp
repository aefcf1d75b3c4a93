#include "net/azure_blob_client.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "base/clock.h"
#include "base/encoding.h"
#include "base/http_url.h"
#include "base/task_secrets.h"
#include "net/http_client.h"
#include "net/s3_client.h"
#include "net/xml_scan.h"

namespace cairn::net {

namespace {

// The REST version Cairn speaks; the emulator and the service both serve it.
constexpr const char* kAzureApiVersion = "2021-08-06";
// Azurite's documented development account (UseDevelopmentStorage=true): public, not a secret.
constexpr const char* kDevelopmentAccount = "devstoreaccount1";
constexpr const char* kDevelopmentKey =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
constexpr const char* kDevelopmentBlobEndpoint = "http://127.0.0.1:10000/devstoreaccount1";

Status AzureError(const std::string& what, const ClientResponse& response) {
  return ObjectStoreError("Azure Blob " + what, response.status, response.body);
}

class AzureBlobStore final : public ObjectStore {
 public:
  AzureBlobStore(Client client, std::string host_header, std::string base_path,
                 AzureAccount account, std::string container)
      : client_(std::move(client)),
        host_header_(std::move(host_header)),
        base_path_(std::move(base_path)),
        account_(std::move(account)),
        container_(std::move(container)) {}

  Result<std::vector<StoredObject>> List(const std::string& prefix) override {
    std::vector<StoredObject> objects;
    std::string marker;
    while (true) {
      std::map<std::string, std::string> query = {
          {"restype", "container"}, {"comp", "list"}, {"prefix", prefix}};
      if (!marker.empty()) query["marker"] = marker;
      CAIRN_ASSIGN_OR_RETURN(ClientResponse response, Send("GET", "", query, "", {}));
      if (response.status != 200) return AzureError("listing " + prefix, response);
      for (std::string_view blob : XmlElements(response.body, "Blob")) {
        auto name = XmlText(blob, "Name");
        auto size = XmlText(blob, "Content-Length");
        if (!name || !size) {
          return Status::Unavailable("Azure Blob listing: an entry without Name or Content-Length");
        }
        objects.push_back({*name, std::strtoull(size->c_str(), nullptr, 10)});
      }
      auto next = XmlText(response.body, "NextMarker");
      if (!next || next->empty()) break;
      if (*next == marker) return Status::Unavailable("Azure Blob listing: the marker repeats");
      marker = *next;
    }
    std::sort(objects.begin(), objects.end(),
              [](const StoredObject& a, const StoredObject& b) { return a.key < b.key; });
    return objects;
  }

  Result<std::string> ReadRange(const std::string& key, uint64_t offset, uint64_t length) override {
    if (length == 0) return std::string();
    CAIRN_ASSIGN_OR_RETURN(ClientResponse response,
                           Send("GET", key, {}, "", {{"x-ms-range", ByteRange(offset, length)}}));
    return RangedReadAnswer("Azure Blob reading " + key, std::move(response), offset, length);
  }

  Status Put(const std::string& key, const std::string& body) override {
    CAIRN_ASSIGN_OR_RETURN(ClientResponse response,
                           Send("PUT", key, {}, body, {{"x-ms-blob-type", "BlockBlob"}}));
    if (response.status != 201) return AzureError("writing " + key, response);
    return Status::Ok();
  }

  Status CreateContainer() {
    CAIRN_ASSIGN_OR_RETURN(ClientResponse response,
                           Send("PUT", "", {{"restype", "container"}}, "", {}));
    if (response.status == 201 || response.status == 409) return Status::Ok();
    return AzureError("creating container " + container_, response);
  }

  Status Delete(const std::string& key) override {
    CAIRN_ASSIGN_OR_RETURN(ClientResponse response, Send("DELETE", key, {}, "", {}));
    if (response.status == 202 || response.status == 200 || response.status == 404) {
      return Status::Ok();
    }
    return AzureError("deleting " + key, response);
  }

 private:
  Result<ClientResponse> Send(const std::string& method, const std::string& key,
                              const std::map<std::string, std::string>& query,
                              const std::string& body, std::map<std::string, std::string> headers) {
    const std::string path = S3UriEncode(
        base_path_ + "/" + container_ + (key.empty() ? "" : "/" + key), /*keep_slash=*/true);
    std::string target = path;
    bool first = true;
    for (const auto& [name, value] : query) {
      target += (first ? "?" : "&") + S3UriEncode(name, false) + "=" + S3UriEncode(value, false);
      first = false;
    }
    headers["host"] = host_header_;
    headers["x-ms-date"] = NowUtcFormatted("%a, %d %b %Y %H:%M:%S GMT");
    headers["x-ms-version"] = kAzureApiVersion;
    if (!body.empty() || method == "PUT") headers["content-length"] = std::to_string(body.size());
    CAIRN_ASSIGN_OR_RETURN(std::string authorization,
                           AzureSharedKeyAuthorization(account_, method, path, query, headers));
    headers["authorization"] = std::move(authorization);
    return client_.Request(method, target, body, headers);
  }

  Client client_;
  std::string host_header_;
  std::string base_path_;  // "" for the service, "/<account>" for the emulator
  AzureAccount account_;
  std::string container_;
};

}  // namespace

Result<AzureAccount> ParseAzureConnectionString(const std::string& connection_string) {
  std::map<std::string, std::string> parts;
  size_t start = 0;
  while (start < connection_string.size()) {
    size_t end = connection_string.find(';', start);
    if (end == std::string::npos) end = connection_string.size();
    const std::string part = connection_string.substr(start, end - start);
    const size_t equals = part.find('=');
    if (!part.empty()) {
      if (equals == std::string::npos || equals == 0) {
        return Status::InvalidArgument(
            "checkpoint_storage.connection_string: not of the form Key=Value;...");
      }
      parts[part.substr(0, equals)] = part.substr(equals + 1);
    }
    start = end + 1;
  }
  AzureAccount account;
  if (parts["UseDevelopmentStorage"] == "true") {
    account = {kDevelopmentAccount, kDevelopmentKey, kDevelopmentBlobEndpoint};
    if (!parts["DevelopmentStorageProxyUri"].empty()) {
      return Status::NotSupported(
          "checkpoint_storage.connection_string: "
          "DevelopmentStorageProxyUri is not supported");
    }
    return account;
  }
  account.name = parts["AccountName"];
  account.key_base64 = parts["AccountKey"];
  if (account.name.empty() || account.key_base64.empty()) {
    return Status::NotSupported(
        "checkpoint_storage.connection_string: the master reaches Azure with an account key; "
        "the connection string has no AccountName and AccountKey (SAS-only strings are not "
        "supported)");
  }
  if (!Base64DecodedSize(account.key_base64)) {
    return Status::InvalidArgument(
        "checkpoint_storage.connection_string: AccountKey is not base64");
  }
  account.blob_endpoint = parts["BlobEndpoint"];
  if (account.blob_endpoint.empty()) {
    const std::string protocol =
        parts["DefaultEndpointsProtocol"].empty() ? "https" : parts["DefaultEndpointsProtocol"];
    const std::string suffix =
        parts["EndpointSuffix"].empty() ? "core.windows.net" : parts["EndpointSuffix"];
    account.blob_endpoint = protocol + "://" + account.name + ".blob." + suffix;
  }
  while (!account.blob_endpoint.empty() && account.blob_endpoint.back() == '/') {
    account.blob_endpoint.pop_back();
  }
  if (!ParseHttpUrl(account.blob_endpoint).ok()) {
    return Status::InvalidArgument(
        "checkpoint_storage.connection_string: BlobEndpoint is not an http(s) URL");
  }
  return account;
}

Result<std::string> AzureSharedKeyAuthorization(const AzureAccount& account,
                                                const std::string& method,
                                                const std::string& resource_path,
                                                const std::map<std::string, std::string>& query,
                                                const std::map<std::string, std::string>& headers) {
  auto header = [&](const std::string& name) {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  };
  std::string content_length = header("content-length");
  if (content_length == "0") content_length.clear();
  std::string to_sign = method + "\n" + header("content-encoding") + "\n" +
                        header("content-language") + "\n" + content_length + "\n" +
                        header("content-md5") + "\n" + header("content-type") + "\n" +
                        header("date") + "\n" + header("if-modified-since") + "\n" +
                        header("if-match") + "\n" + header("if-none-match") + "\n" +
                        header("if-unmodified-since") + "\n" + header("range") + "\n";
  for (const auto& [name, value] : headers) {  // sorted by lowercase name
    if (name.rfind("x-ms-", 0) == 0) to_sign += name + ":" + value + "\n";
  }
  to_sign += "/" + account.name + resource_path;
  std::map<std::string, std::string> lowered;
  for (const auto& [name, value] : query) lowered[AsciiLower(name)] = value;
  for (const auto& [name, value] : lowered) to_sign += "\n" + name + ":" + value;
  CAIRN_ASSIGN_OR_RETURN(std::string key, Base64Decode(account.key_base64));
  return "SharedKey " + account.name + ":" + Base64Encode(HmacSha256(key, to_sign));
}

namespace {

Result<std::unique_ptr<AzureBlobStore>> OpenStore(const AzureAccount& account,
                                                  const std::string& container,
                                                  const std::string& ca_file) {
  CAIRN_ASSIGN_OR_RETURN(HttpUrl url, ParseHttpUrl(account.blob_endpoint));
  std::string host_header = HostHeaderOf(url);
  std::string base_path = url.target == "/" ? "" : url.target;
  while (!base_path.empty() && base_path.back() == '/') base_path.pop_back();
  return std::make_unique<AzureBlobStore>(
      Client(url.host, url.port, ObjectStoreClientOptions(url.tls, ca_file)),
      std::move(host_header), std::move(base_path), account, container);
}

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenAzureBlob(const AzureAccount& account,
                                                   const std::string& container,
                                                   const std::string& ca_file) {
  CAIRN_ASSIGN_OR_RETURN(auto store, OpenStore(account, container, ca_file));
  return std::unique_ptr<ObjectStore>(std::move(store));
}

Status CreateAzureContainer(const AzureAccount& account, const std::string& container,
                            const std::string& ca_file) {
  CAIRN_ASSIGN_OR_RETURN(auto store, OpenStore(account, container, ca_file));
  return store->CreateContainer();
}

}  // namespace cairn::net
