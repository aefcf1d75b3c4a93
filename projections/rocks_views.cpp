#include "projections/rocks_views.h"

#include <algorithm>
#include <memory>
#include <typeinfo>
#include <vector>

namespace cairn::projections {

namespace {

// What an entry costs beyond its key's and value's bytes: the hash node, the strings' headers.
constexpr size_t kEntryOverheadBytes = 96;
// What a view kept parsed costs per byte of its serialization: its fields at their full widths,
// a heap string for each string field. Measured on the 1M-event rebuild's peak
// (docs/benchmarks.md, "Projections: memtables and bulk loads").
constexpr size_t kParsedBytesPerSerializedByte = 5;

bool SameType(const google::protobuf::MessageLite& a, const google::protobuf::MessageLite& b) {
  return typeid(a) == typeid(b);
}

rocksdb::Slice ToSlice(std::string_view bytes) {
  return rocksdb::Slice(bytes.data(), bytes.size());
}

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

RocksBatchStore::Entry* RocksBatchStore::Lookup(std::string_view key, bool* added) {
  // A projector reads a view and writes it back: the second touch of the same key skips the
  // hashing and probing, a notable share of a rebuild's CPU (docs/benchmarks.md, "Projections:
  // memtables and bulk loads").
  if (last_entry_ != nullptr && key == last_key_) {
    *added = false;
    return last_entry_;
  }
  auto [it, inserted] = entries_.try_emplace(key);
  *added = inserted;
  if (inserted) bytes_ += key.size() + kEntryOverheadBytes;
  // Valid until the next insertion may move the table's slots; every insertion passes here.
  last_key_ = it->first;
  last_entry_ = &it->second;
  return last_entry_;
}

Result<RocksBatchStore::Entry*> RocksBatchStore::Find(std::string_view key) {
  bool added = false;
  Entry* entry = Lookup(key, &added);
  if (!added) return entry;
  std::string value;
  rocksdb::Status status = family_is_empty_
                               ? rocksdb::Status::NotFound()
                               : db_->Get(rocksdb::ReadOptions(), family_, ToSlice(key), &value);
  if (status.ok()) {
    bytes_ += value.size();
    entry->value = std::move(value);
    entry->in_db = InDb::kPresent;
  } else if (status.IsNotFound()) {
    entry->in_db = InDb::kAbsent;
  } else {
    // Not known after all: the key is dropped, so a retry reads the DB again.
    entries_.erase(key);
    last_entry_ = nullptr;
    bytes_ -= key.size() + kEntryOverheadBytes;
    return FromRocks(status, "projection read");
  }
  return entry;
}

RocksBatchStore::Entry& RocksBatchStore::Slot(std::string_view key) {
  bool added = false;
  Entry* entry = Lookup(key, &added);
  if (added && family_is_empty_) entry->in_db = InDb::kAbsent;
  entry->dirty = true;
  return *entry;
}

void RocksBatchStore::SetValue(Entry& entry, std::optional<std::string> value) {
  if (entry.value) bytes_ -= entry.value->size();
  if (value) bytes_ += value->size();
  entry.value = std::move(value);
  DropParsed(entry);
}

void RocksBatchStore::DropParsed(Entry& entry) {
  bytes_ -= entry.parsed_bytes;
  entry.parsed.reset();
  entry.parsed_bytes = 0;
  entry.value_stale = false;
}

void RocksBatchStore::Serialize(Entry& entry) {
  if (!entry.value_stale) return;
  bytes_ -= entry.value->size();
  SerializeDeterministic(*entry.parsed, &*entry.value);
  bytes_ += entry.value->size();
  entry.value_stale = false;
}

void RocksBatchStore::KeepParsed(Entry& entry, const google::protobuf::MessageLite& message) {
  if (entry.parsed.get() != &message) {  // else changed in place (OpenMessage)
    if (entry.parsed && SameType(*entry.parsed, message)) {
      entry.parsed->Clear();  // keeps its strings and elements for the copy to reuse
    } else {
      DropParsed(entry);
      entry.parsed.reset(message.New());
    }
    entry.parsed->CheckTypeAndMergeFrom(message);
  }
  // Charged again at every put: views grow (a job's tasks, an agent's allocations, a trial's
  // metrics), and the budget bounds the memory only if it sees them grow.
  ChargeParsed(entry, entry.parsed->ByteSizeLong());
}

void RocksBatchStore::ChargeParsed(Entry& entry, size_t serialized_bytes) {
  bytes_ -= entry.parsed_bytes;
  entry.parsed_bytes = kParsedBytesPerSerializedByte * serialized_bytes;
  bytes_ += entry.parsed_bytes;
}

Result<std::optional<std::string>> RocksBatchStore::Get(std::string_view key) {
  CAIRN_ASSIGN_OR_RETURN(Entry * entry, Find(key));
  Serialize(*entry);
  return entry->value;
}

Status RocksBatchStore::Put(std::string_view key, std::string_view value) {
  SetValue(Slot(key), std::string(value));
  return Status::Ok();
}

Status RocksBatchStore::Delete(std::string_view key) {
  Entry& entry = Slot(key);
  if (family_is_empty_ && entry.in_db == InDb::kAbsent) {
    // Never in the DB and now gone: the same as no entry, which a family with no keys answers
    // without a read. Kept, such keys were most of a rebuild's entries (a queued job's index
    // keys, a task's index, live from submission to exit), every lookup probing past them.
    SetValue(entry, std::nullopt);
    bytes_ -= key.size() + kEntryOverheadBytes;
    if (last_entry_ == &entry) last_entry_ = nullptr;
    entries_.erase(key);
    return Status::Ok();
  }
  SetValue(entry, std::nullopt);
  return Status::Ok();
}

Result<bool> RocksBatchStore::GetMessage(std::string_view key,
                                         google::protobuf::MessageLite* message) {
  CAIRN_ASSIGN_OR_RETURN(Entry * entry, Find(key));
  if (entry->parsed.get() == message) return true;  // the store's own, opened before
  if (entry->parsed && SameType(*entry->parsed, *message)) {
    message->Clear();
    message->CheckTypeAndMergeFrom(*entry->parsed);
    return true;
  }
  if (!entry->value) return false;
  Serialize(*entry);  // kept as another type: read through its bytes
  CAIRN_RETURN_IF_ERROR(ParseView(*entry->value, key, message));
  return true;
}

Result<google::protobuf::MessageLite*> RocksBatchStore::OpenMessage(
    std::string_view key, google::protobuf::MessageLite* scratch) {
  if (!keep_parsed_views_) return ViewStore::OpenMessage(key, scratch);
  CAIRN_ASSIGN_OR_RETURN(Entry * entry, Find(key));
  if (entry->parsed && SameType(*entry->parsed, *scratch)) return entry->parsed.get();
  if (!entry->value) return nullptr;
  // Read from the DB (or kept as another type): parsed once, then changed in place.
  Serialize(*entry);
  std::unique_ptr<google::protobuf::MessageLite> parsed(scratch->New());
  CAIRN_RETURN_IF_ERROR(ParseView(*entry->value, key, parsed.get()));
  DropParsed(*entry);
  entry->parsed = std::move(parsed);
  ChargeParsed(*entry, entry->value->size());
  return entry->parsed.get();
}

Status RocksBatchStore::PutMessage(std::string_view key,
                                   const google::protobuf::MessageLite& message) {
  Entry& entry = Slot(key);
  if (!entry.value) entry.value.emplace();
  if (keep_parsed_views_) {
    KeepParsed(entry, message);
    entry.value_stale = true;
    return Status::Ok();
  }
  bytes_ -= entry.value->size();
  SerializeDeterministic(message, &*entry.value);
  bytes_ += entry.value->size();
  return Status::Ok();
}

std::optional<const std::string*> RocksBatchStore::Change(const std::string& key,
                                                          const Entry& entry) const {
  if (!entry.dirty) return std::nullopt;
  if (entry.value) return &*entry.value;
  // Written blind (never read): KeyMayExist answers from memory whether the DB may have it.
  std::string ignored;
  bool absent = entry.in_db == InDb::kAbsent ||
                (entry.in_db == InDb::kUnknown &&
                 !db_->KeyMayExist(rocksdb::ReadOptions(), family_, key, &ignored));
  if (absent) return std::nullopt;
  return nullptr;
}

Status RocksBatchStore::WriteTo(rocksdb::WriteBatch* batch) {
  for (auto& [key, entry] : entries_) {
    Serialize(entry);
    auto change = Change(key, entry);
    if (!change) continue;
    rocksdb::Status status =
        *change ? batch->Put(family_, key, **change) : batch->Delete(family_, key);
    CAIRN_RETURN_IF_ERROR(FromRocks(status, "projection batch"));
  }
  return Status::Ok();
}

namespace {

// A change to write, with the key's first bytes inline: sorting a bulk load's million keys by
// comparing heap strings was one cache miss per comparison and most of the ingest's time.
struct SortableChange {
  static constexpr size_t kInlineWords = 3;
  SortableChange(const std::string* key, const std::string* value,
                 const google::protobuf::MessageLite* view)
      : key(key), value(value), view(view) {
    for (size_t word = 0; word < kInlineWords; ++word) {
      uint64_t bits = 0;  // big-endian, zero-padded: integer order is byte order
      for (size_t i = 0; i < 8; ++i) {
        const size_t at = word * 8 + i;
        bits = bits << 8 | (at < key->size() ? static_cast<unsigned char>((*key)[at]) : 0);
      }
      prefix[word] = bits;
    }
  }
  bool operator<(const SortableChange& other) const {
    for (size_t word = 0; word < kInlineWords; ++word) {
      if (prefix[word] != other.prefix[word]) return prefix[word] < other.prefix[word];
    }
    return *key < *other.key;  // equal padded prefixes: the whole keys decide ("a" < "a\0")
  }
  uint64_t prefix[kInlineWords];
  const std::string* key;
  const std::string* value;                   // nullptr = a delete
  const google::protobuf::MessageLite* view;  // not nullptr: the value is its serialization
};

}  // namespace

Result<size_t> RocksBatchStore::WriteTo(rocksdb::SstFileWriter& table) const {
  // The table's slots are read in order, but what they point to (a long key's bytes, a value's,
  // a view kept parsed) is scattered over the heap, and in key order so are the slots: each a
  // cache miss that, waited for one at a time, was most of this function's time. So what is
  // read a few changes ahead is asked for first (the slot, then what it points to).
  constexpr size_t kAhead = 8;
  std::vector<SortableChange> changes;
  changes.reserve(entries_.size());
  auto ahead = entries_.begin();
  for (size_t i = 0; i < kAhead && ahead != entries_.end(); ++i) ++ahead;
  for (const auto& [key, entry] : entries_) {
    if (ahead != entries_.end()) {
      __builtin_prefetch(ahead->first.data());
      ++ahead;
    }
    auto change = Change(key, entry);
    if (!change) continue;
    changes.emplace_back(&key, *change,
                         *change && entry.value_stale ? entry.parsed.get() : nullptr);
  }
  std::sort(changes.begin(), changes.end());
  // A view kept parsed is serialized right before the table takes it, into one reused buffer:
  // the bulk load's hundreds of megabytes of views are never held serialized all at once.
  std::string serialized;
  for (size_t i = 0; i < changes.size(); ++i) {
    if (i + 2 * kAhead < changes.size()) {
      const SortableChange& later = changes[i + 2 * kAhead];
      __builtin_prefetch(later.key);  // the slot: the key's and the value's strings
      if (later.view != nullptr) __builtin_prefetch(later.view);
    }
    if (i + kAhead < changes.size()) {
      const SortableChange& next = changes[i + kAhead];
      __builtin_prefetch(next.key->data());
      if (next.value != nullptr && next.view == nullptr) __builtin_prefetch(next.value->data());
    }
    const SortableChange& change = changes[i];
    rocksdb::Status status;
    if (change.view != nullptr) {
      SerializeDeterministic(*change.view, &serialized);
      status = table.Put(*change.key, serialized);
    } else {
      status = change.value ? table.Put(*change.key, *change.value) : table.Delete(*change.key);
    }
    CAIRN_RETURN_IF_ERROR(FromRocks(status, "projection table file"));
  }
  return changes.size();
}

Result<std::optional<std::string>> RocksReader::Get(std::string_view key) {
  std::string value;
  rocksdb::Status status = db_->Get(options_, family_, ToSlice(key), &value);
  if (status.IsNotFound()) return std::optional<std::string>();
  CAIRN_RETURN_IF_ERROR(FromRocks(status, "projection read"));
  return std::optional<std::string>(std::move(value));
}

Result<std::vector<std::optional<std::string>>> RocksReader::GetMany(
    const std::vector<std::string>& keys) {
  std::vector<rocksdb::Slice> slices;
  slices.reserve(keys.size());
  for (const auto& key : keys) slices.emplace_back(ToSlice(key));
  std::vector<rocksdb::PinnableSlice> pinned(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  db_->MultiGet(options_, family_, keys.size(), slices.data(), pinned.data(), statuses.data());
  std::vector<std::optional<std::string>> values(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (statuses[i].IsNotFound()) continue;
    CAIRN_RETURN_IF_ERROR(FromRocks(statuses[i], "projection read"));
    values[i].emplace(pinned[i].data(), pinned[i].size());
  }
  return values;
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

Status RocksReader::ScanRange(
    std::string_view begin, std::string_view end, bool backward,
    const std::function<bool(std::string_view, std::string_view)>& visit) {
  if (begin >= end) return Status::Ok();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(options_, family_));
  auto in_range = [&](std::string_view key) { return key >= begin && key < end; };
  auto value = [&]() { return std::string_view(it->value().data(), it->value().size()); };
  if (!backward) {
    for (it->Seek(ToSlice(begin)); it->Valid(); it->Next()) {
      std::string_view key(it->key().data(), it->key().size());
      if (!in_range(key) || !visit(key, value())) break;
    }
  } else {
    // The last key below `end`: SeekForPrev lands on `end` itself when it exists.
    it->SeekForPrev(ToSlice(end));
    if (it->Valid() && std::string_view(it->key().data(), it->key().size()) == end) it->Prev();
    for (; it->Valid(); it->Prev()) {
      std::string_view key(it->key().data(), it->key().size());
      if (!in_range(key) || !visit(key, value())) break;
    }
  }
  return FromRocks(it->status(), "projection range scan");
}

}  // namespace cairn::projections
