// ViewStore and ViewReader over RocksDB: a batch store that reads its own writes and a snapshot
// reader for consistent queries.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <unordered_map>

#include "projections/view_store.h"

namespace cairn::projections {

Status FromRocks(const rocksdb::Status& status, const std::string& what);

// Collects one batch of a projector's writes in memory over one column family of the DB; reads
// see the batch's own writes first. WriteTo then puts each key's final value into a WriteBatch,
// so a view changed by many events of the batch is written once (a WriteBatchWithIndex would
// carry, and the memtable would insert, every intermediate version).
class RocksBatchStore : public ViewStore {
 public:
  RocksBatchStore(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family)
      : db_(db), family_(family) {}
  Result<std::optional<std::string>> Get(std::string_view key) override;
  Status Put(std::string_view key, std::string_view value) override;
  Status Delete(std::string_view key) override;
  Result<bool> GetMessage(std::string_view key, google::protobuf::MessageLite* message) override;
  Status PutMessage(std::string_view key, const google::protobuf::MessageLite& message) override;

  // Adds every key this batch changed, with its final value, to `batch`. A key created and
  // deleted within the batch is left out (no tombstone for a key the DB never had).
  Status WriteTo(rocksdb::WriteBatch* batch) const;

 private:
  enum class InDb { kUnknown, kAbsent, kPresent };  // the key before this batch
  struct Entry {
    std::optional<std::string> value;  // nullopt = absent
    bool dirty = false;                // false: read from the DB, unchanged
    InDb in_db = InDb::kUnknown;
  };
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>()(key); }
  };
  // The entry for `key`, read from the DB on first use.
  Result<Entry*> Find(std::string_view key);
  Entry& Slot(std::string_view key);

  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* family_;
  std::unordered_map<std::string, Entry, KeyHash, std::equal_to<>> entries_;
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
  Status Scan(std::string_view prefix,
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
