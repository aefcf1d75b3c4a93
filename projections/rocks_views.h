// ViewStore and ViewReader over RocksDB: a batch store that reads its own writes (a
// WriteBatchWithIndex over the DB) and a snapshot reader for consistent queries.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/utilities/write_batch_with_index.h>

#include "projections/view_store.h"

namespace cairn::projections {

Status FromRocks(const rocksdb::Status& status, const std::string& what);

// Writes go to `batch` (one column family of it); reads see the batch first, then the DB.
class RocksBatchStore : public ViewStore {
 public:
  RocksBatchStore(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family,
                  rocksdb::WriteBatchWithIndex* batch)
      : db_(db), family_(family), batch_(batch) {}
  Result<std::optional<std::string>> Get(std::string_view key) override;
  Status Put(std::string_view key, std::string_view value) override;
  Status Delete(std::string_view key) override;

 private:
  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* family_;
  rocksdb::WriteBatchWithIndex* batch_;
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
