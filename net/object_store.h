// What the master does to checkpoints kept in an object store (S3, Azure Blob): list them, read
// them a range at a time (downloads stream through the master without holding a whole object),
// and delete them. Implementations speak each store's REST protocol over net::Client; none is
// thread-safe, so each user opens its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "net/http_client.h"

namespace cairn::net {

// The most an answer of a store may hold: a listing page or a ranged read never needs more, and a
// longer answer is not the store's.
inline constexpr uint64_t kMaxObjectStoreAnswerBytes = 64ull << 20;

struct StoredObject {
  std::string key;  // the whole key, prefix included
  uint64_t size = 0;
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Every object whose key starts with `prefix`, in key order (the store pages; this follows).
  virtual Result<std::vector<StoredObject>> List(const std::string& prefix) = 0;
  // Bytes [offset, offset + length) of `key` (fewer at its end).
  virtual Result<std::string> ReadRange(const std::string& key, uint64_t offset,
                                        uint64_t length) = 0;
  // Writes `key` whole (tests, small objects).
  virtual Status Put(const std::string& key, const std::string& body) = 0;
  // Deletes `key`; a key already gone is not an error.
  virtual Status Delete(const std::string& key) = 0;
};

// For the implementations: the Status of a store's error answer (its XML <Code> and <Message>,
// mapped by HTTP status as StatusFromHttp does), "<what> failed: <Code>: <Message>"; and the
// client options every store's connection uses.
Status ObjectStoreError(const std::string& what, int http_status, const std::string& body);
// The Range value for bytes [offset, offset + length), length > 0.
std::string ByteRange(uint64_t offset, uint64_t length);
// The bytes a ranged GET answered: a 206's body; a 200's (a store that ignored the Range sent the
// whole object) cut to the range; none for 416 (past the end); else the store's error.
Result<std::string> RangedReadAnswer(const std::string& what, ClientResponse response,
                                     uint64_t offset, uint64_t length);
ClientOptions ObjectStoreClientOptions(bool tls, const std::string& ca_file);

}  // namespace cairn::net
