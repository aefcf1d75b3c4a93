#include "projections/rocks_views.h"

#include <memory>

namespace cairn::projections {

namespace {

rocksdb::Slice ToSlice(std::string_view bytes) { return rocksdb::Slice(bytes.data(), bytes.size()); }

}  // namespace

Status FromRocks(const rocksdb::Status& status, const std::string& what) {
  if (status.ok()) return Status::Ok();
  std::string message = what + ": " + status.ToString();
  if (status.IsCorruption()) return Status::Corruption(message);
  if (status.IsNotFound()) return Status::NotFound(message);
  if (status.IsInvalidArgument()) return Status::InvalidArgument(message);
  if (status.IsNotSupported()) return Status::NotSupported(message);
  if (status.IsBusy() || status.IsTryAgain()) return Status::Unavailable(message);
  return Status::IOError(message);
}

Result<std::optional<std::string>> RocksBatchStore::Get(std::string_view key) {
  std::string value;
  rocksdb::Status status =
      batch_->GetFromBatchAndDB(db_, rocksdb::ReadOptions(), family_, ToSlice(key), &value);
  if (status.IsNotFound()) return std::optional<std::string>();
  CAIRN_RETURN_IF_ERROR(FromRocks(status, "projection read"));
  return std::optional<std::string>(std::move(value));
}

Status RocksBatchStore::Put(std::string_view key, std::string_view value) {
  return FromRocks(batch_->Put(family_, ToSlice(key), ToSlice(value)), "projection write");
}

Status RocksBatchStore::Delete(std::string_view key) {
  return FromRocks(batch_->Delete(family_, ToSlice(key)), "projection delete");
}

Result<std::optional<std::string>> RocksReader::Get(std::string_view key) {
  std::string value;
  rocksdb::Status status = db_->Get(options_, family_, ToSlice(key), &value);
  if (status.IsNotFound()) return std::optional<std::string>();
  CAIRN_RETURN_IF_ERROR(FromRocks(status, "projection read"));
  return std::optional<std::string>(std::move(value));
}

Status RocksReader::Scan(std::string_view prefix,
                         const std::function<bool(std::string_view, std::string_view)>& visit) {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(options_, family_));
  for (it->Seek(ToSlice(prefix)); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    if (key.substr(0, prefix.size()) != prefix) break;
    if (!visit(key, std::string_view(it->value().data(), it->value().size()))) break;
  }
  return FromRocks(it->status(), "projection scan");
}

}  // namespace cairn::projections
