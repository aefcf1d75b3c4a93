// The small key-value interfaces projectors and queries run on, so the same projector code folds
// events into RocksDB (live) and into an ordered in-memory map (`cairn replay state`).
#pragma once

#include <google/protobuf/arena.h>
#include <google/protobuf/message_lite.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cairn::projections {

// Keys starting with this byte hold bookkeeping (the checkpoint), never view content; digests
// skip them. View keys always start with a printable prefix such as "task/".
inline constexpr char kBookkeepingPrefix = '\0';
inline const std::string kCheckpointKey = std::string(1, kBookkeepingPrefix) + "checkpoint";

inline bool IsBookkeepingKey(std::string_view key) {
  return !key.empty() && key.front() == kBookkeepingPrefix;
}

// What a projector writes through while it applies events. Reads see earlier writes of the same
// batch. Not thread-safe: one projector applies on one thread.
class ViewStore {
 public:
  virtual ~ViewStore() = default;
  virtual Result<std::optional<std::string>> Get(std::string_view key) = 0;
  virtual Status Put(std::string_view key, std::string_view value) = 0;
  virtual Status Delete(std::string_view key) = 0;

  // Typed access, what projectors mostly use. GetMessage parses the value at `key` into
  // `message`: false when absent, Corruption when unparsable. PutMessage stores the
  // deterministic serialization. Stores parse and serialize in place, without copying bytes.
  virtual Result<bool> GetMessage(std::string_view key, google::protobuf::MessageLite* message) = 0;
  virtual Status PutMessage(std::string_view key, const google::protobuf::MessageLite& message) = 0;

  // Reads the view at `key` to change it in place: the message to change, nullptr when absent.
  // A store that keeps its views parsed (a bulk load's, rocks_views.h) returns its own copy, so
  // an event about a view neither parses nor copies it; other stores parse it into `scratch`
  // (of the view's type) and return that. Contract: change the view only to write it back with
  // PutMessage(key, *view), and use the pointer only until `key` is deleted or written with
  // anything else than the view itself (a Delete, a Put or an OpenMessage as another type lets
  // the store's copy go; a PutMessage of another message replaces what it holds).
  virtual Result<google::protobuf::MessageLite*> OpenMessage(
      std::string_view key, google::protobuf::MessageLite* scratch);
};

// OpenMessage, typed: `scratch`'s type is the view's.
template <typename View>
Result<View*> OpenView(ViewStore& store, std::string_view key, View* scratch) {
  CAIRN_ASSIGN_OR_RETURN(google::protobuf::MessageLite * view, store.OpenMessage(key, scratch));
  return static_cast<View*>(view);  // a store's own copy is always of `scratch`'s type
}

// What queries and digests read: point reads and ordered prefix scans over one consistent state.
class ViewReader {
 public:
  virtual ~ViewReader() = default;
  virtual Result<std::optional<std::string>> Get(std::string_view key) = 0;
  // The values of `keys`, in their order (nullopt: absent). A store that can batch point reads
  // (RocksDB's MultiGet) does; by default, one Get each.
  virtual Result<std::vector<std::optional<std::string>>> GetMany(
      const std::vector<std::string>& keys);
  // Calls `visit` for each key starting with `prefix`, in byte order, until it returns false.
  virtual Status Scan(
      std::string_view prefix,
      const std::function<bool(std::string_view key, std::string_view value)>& visit) = 0;
  // Calls `visit` for each key in [begin, end), in byte order (`backward`: from the last one
  // down), until it returns false: a series read from a moment on, or the entry before one.
  virtual Status ScanRange(
      std::string_view begin, std::string_view end, bool backward,
      const std::function<bool(std::string_view key, std::string_view value)>& visit) = 0;
};

// An ordered in-memory store: the whole state of one projector.
class MemoryViewStore : public ViewStore, public ViewReader {
 public:
  Result<std::optional<std::string>> Get(std::string_view key) override;
  Status Put(std::string_view key, std::string_view value) override;
  Status Delete(std::string_view key) override;
  Result<bool> GetMessage(std::string_view key, google::protobuf::MessageLite* message) override;
  Status PutMessage(std::string_view key, const google::protobuf::MessageLite& message) override;
  Status Scan(std::string_view prefix,
              const std::function<bool(std::string_view, std::string_view)>& visit) override;
  Status ScanRange(std::string_view begin, std::string_view end, bool backward,
                   const std::function<bool(std::string_view, std::string_view)>& visit) override;

 private:
  std::map<std::string, std::string, std::less<>> entries_;
};

// Protobuf serialization with deterministic ordering, so equal views are equal bytes; reuses
// `out`'s buffer.
void SerializeDeterministic(const google::protobuf::MessageLite& message, std::string* out);

// Parses `bytes` (the value at `key`, for the error message) into `message`.
Status ParseView(std::string_view bytes, std::string_view key,
                 google::protobuf::MessageLite* message);

// Reads and parses the message at `key`: false when absent, Corruption when unparsable.
Result<bool> GetMessage(ViewReader& reader, std::string_view key,
                        google::protobuf::MessageLite* message);
// The views at `keys` in one batched read, parsed in order into `messages` (resized to match);
// `found[i]` says whether keys[i] was there (its message stays empty when not).
template <typename View>
Status GetMessages(ViewReader& reader, const std::vector<std::string>& keys,
                   std::vector<View>* messages, std::vector<bool>* found) {
  CAIRN_ASSIGN_OR_RETURN(auto values, reader.GetMany(keys));
  messages->clear();
  messages->resize(keys.size());
  found->assign(keys.size(), false);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!values[i]) continue;
    CAIRN_RETURN_IF_ERROR(ParseView(*values[i], keys[i], &(*messages)[i]));
    (*found)[i] = true;
  }
  return Status::Ok();
}

// An arena whose first block is on the stack: the views a projector decodes for one event
// allocate from it instead of the heap, and are freed at once when it goes out of scope.
class ScratchArena {
 public:
  ScratchArena() : arena_(block_, sizeof block_) {}
  template <typename Message>
  Message* Create() {
    return google::protobuf::Arena::CreateMessage<Message>(&arena_);
  }

 private:
  alignas(16) char block_[8192];
  google::protobuf::Arena arena_;
};

// Hex SHA-256 over every non-bookkeeping (key, value) pair in key order, each framed as
// <8-byte big-endian key length><key><8-byte big-endian value length><value>.
Result<std::string> DigestViews(ViewReader& reader);

// Small id lists stored as one value ("a\nb\nc"), for the indexes projectors keep beside their
// views (ids never contain a newline), in insertion order.
std::vector<std::string> SplitIds(std::string_view list);
std::string JoinIds(const std::vector<std::string>& ids);

// "<prefix><id>": a view's key in its projector's key space.
std::string PrefixedKey(std::string_view prefix, std::string_view id);

// Big-endian fixed-width encodings, so byte order of keys is numeric order.
void AppendBigEndian64(std::string* out, uint64_t value);
void AppendBigEndian32(std::string* out, uint32_t value);
// The first 8 bytes of `bytes` (fewer: as if zero-padded on the left) as AppendBigEndian64 wrote.
uint64_t DecodeBigEndian64(std::string_view bytes);

}  // namespace cairn::projections
