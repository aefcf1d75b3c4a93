// An Azure Blob Storage client for the master's checkpoint work, reached through a connection
// string and signed with the account's Shared Key.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "net/object_store.h"

namespace cairn::net {

// What a connection string says: the account, its key (base64) and the blob endpoint
// (BlobEndpoint, else <DefaultEndpointsProtocol>://<AccountName>.blob.<EndpointSuffix>).
struct AzureAccount {
  std::string name;
  std::string key_base64;
  std::string blob_endpoint;  // no trailing '/'
};

// Parses "Key=Value;..." as Azure writes it (UseDevelopmentStorage=true is the emulator's
// well-known account). InvalidArgument, never echoing the string, when it lacks a part.
Result<AzureAccount> ParseAzureConnectionString(const std::string& connection_string);

// The Authorization header of a Shared Key request (pure). `resource_path` is the URL's
// decoded path ("/account/container/blob" for the emulator's path-style URLs); `query` its
// parameters, decoded; `headers` by lowercase name (x-ms-* among them; content-length and range
// when sent).
Result<std::string> AzureSharedKeyAuthorization(const AzureAccount& account,
                                                const std::string& method,
                                                const std::string& resource_path,
                                                const std::map<std::string, std::string>& query,
                                                const std::map<std::string, std::string>& headers);

// A client for `container`. `ca_file` as net::ClientOptions.
Result<std::unique_ptr<ObjectStore>> OpenAzureBlob(const AzureAccount& account,
                                                   const std::string& container,
                                                   const std::string& ca_file = "");

// Creates `container` (one that exists already is fine).
Status CreateAzureContainer(const AzureAccount& account, const std::string& container,
                            const std::string& ca_file = "");

}  // namespace cairn::net
