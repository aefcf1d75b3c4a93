// ViewStore and ViewReader over RocksDB: a batch store that reads its own writes and a snapshot
// reader for consistent queries.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/hash/hash.h>
#include <rocksdb/db.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/write_batch.h>

#include <memory>

#include "projections/view_store.h"

namespace cairn::projections {

Status FromRocks(const rocksdb::Status& status, const std::string& what);

// Collects one batch of a projector's writes in memory over one column family of the DB; reads
// see the batch's own writes first. WriteTo then puts each key's final value into a WriteBatch,
// so a view changed by many events of the batch is written once (a WriteBatchWithIndex would
// carry, and the memtable would insert, every intermediate version).
class RocksBatchStore : public ViewStore {
 public:
  // `family_is_empty`: the family holds no key yet (a fresh rebuild), so a key missing from the
  // batch is absent without asking the DB. `keep_parsed_views`: the store keeps each view a
  // projector writes as a message, serialized only when WriteTo (or a Get of its bytes) needs
  // it, and OpenMessage changes it in place. For a bulk load, where every event about a view
  // read it and wrote it back: parsed never, serialized once. A batch of a few events reads a
  // view from the DB and writes it once, so it would gain nothing.
  RocksBatchStore(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family,
                  bool family_is_empty = false, bool keep_parsed_views = false)
      : db_(db),
        family_(family),
        family_is_empty_(family_is_empty),
        keep_parsed_views_(keep_parsed_views) {}
  Result<std::optional<std::string>> Get(std::string_view key) override;
  Status Put(std::string_view key, std::string_view value) override;
  Status Delete(std::string_view key) override;
  Result<bool> GetMessage(std::string_view key, google::protobuf::MessageLite* message) override;
  Status PutMessage(std::string_view key, const google::protobuf::MessageLite& message) override;
  Result<google::protobuf::MessageLite*> OpenMessage(
      std::string_view key, google::protobuf::MessageLite* scratch) override;

  // Adds every key this batch changed, with its final value, to `batch`. A key created and
  // deleted within the batch is left out (no tombstone for a key the DB never had).
  Status WriteTo(rocksdb::WriteBatch* batch);
  // The same changes as one table file for IngestExternalFile, keys in byte order as the file
  // needs them (a deleted key as a tombstone). Returns how many keys were written: a file with
  // none cannot be finished, so the caller skips it.
  Result<size_t> WriteTo(rocksdb::SstFileWriter& table) const;

  // About how much memory the batch holds: keys, values and per-entry overhead.
  size_t ApproximateBytes() const { return bytes_; }

 private:
  enum class InDb { kUnknown, kAbsent, kPresent };  // the key before this batch
  struct Entry {
    std::optional<std::string> value;  // nullopt = absent; stale while `parsed` is newer
    // keep_parsed_views: the view as a message; `value` is its serialization, brought up to
    // date only when needed (`value_stale` until then).
    std::unique_ptr<google::protobuf::MessageLite> parsed;
    size_t parsed_bytes = 0;  // what `parsed` is charged in ApproximateBytes
    bool value_stale = false;
    bool dirty = false;  // false: read from the DB, unchanged
    InDb in_db = InDb::kUnknown;
  };
  // The entry for `key`, read from the DB on first use.
  Result<Entry*> Find(std::string_view key);
  Entry& Slot(std::string_view key);
  // The entry for `key`, added empty (`*added`) when the batch has none.
  Entry* Lookup(std::string_view key, bool* added);
  // The key's final state in the DB's terms: nullopt when it needs no write, else its value
  // (nullptr = a delete).
  std::optional<const std::string*> Change(const std::string& key, const Entry& entry) const;
  void SetValue(Entry& entry, std::optional<std::string> value);
  // `entry.parsed` let go.
  void DropParsed(Entry& entry);
  // Brings a parsed view's `value` up to date.
  void Serialize(Entry& entry);
  // The view of `entry` kept as a copy of `message`, in the same message when it is one.
  void KeepParsed(Entry& entry, const google::protobuf::MessageLite& message);
  // Charges `entry.parsed` in ApproximateBytes for a view of `serialized_bytes`.
  void ChargeParsed(Entry& entry, size_t serialized_bytes);

  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* family_;
  const bool family_is_empty_;
  const bool keep_parsed_views_;
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return absl::Hash<std::string_view>()(key); }
  };
  // Open addressing: a bulk load (projection_engine.h) holds millions of keys, and a lookup here
  // is most of a projector's cost; std::unordered_map's chained nodes took more cache misses
  // (docs/benchmarks.md, "Projections: memtables and bulk loads").
  absl::flat_hash_map<std::string, Entry, KeyHash, std::equal_to<>> entries_;
  size_t bytes_ = 0;
  // The key last looked up and its entry: a view read and then written is found once.
  std::string_view last_key_;
  Entry* last_entry_ = nullptr;
};

// Reads one column family at `snapshot` (nullptr = the latest state).
class RocksReader : public ViewReader {
 public:
  RocksReader(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family,
              const rocksdb::Snapshot* snapshot)
      : db_(db), family_(family) {
    options_.snapshot = snapshot;
  }
  Result<std::optional<std::string>> Get(std::string_view key) override;
  Result<std::vector<std::optional<std::string>>> GetMany(
      const std::vector<std::string>& keys) override;
  Status Scan(std::string_view prefix,
              const std::function<bool(std::string_view, std::string_view)>& visit) override;
  Status ScanRange(std::string_view begin, std::string_view end, bool backward,
                   const std::function<bool(std::string_view, std::string_view)>& visit) override;

 private:
  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* family_;
  rocksdb::ReadOptions options_;
};

// A snapshot released on destruction.
class ScopedSnapshot {
 public:
  explicit ScopedSnapshot(rocksdb::DB* db) : db_(db), snapshot_(db->GetSnapshot()) {}
  ~ScopedSnapshot() { db_->ReleaseSnapshot(snapshot_); }
  ScopedSnapshot(const ScopedSnapshot&) = delete;
  ScopedSnapshot& operator=(const ScopedSnapshot&) = delete;
  const rocksdb::Snapshot* get() const { return snapshot_; }

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snapshot_;
};

}  // namespace cairn::projections
