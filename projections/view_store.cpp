#include "projections/view_store.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <openssl/evp.h>

#include <memory>

#include "base/encoding.h"

namespace cairn::projections {

Result<std::optional<std::string>> MemoryViewStore::Get(std::string_view key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Status MemoryViewStore::Put(std::string_view key, std::string_view value) {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    entries_.emplace(std::string(key), std::string(value));
  } else {
    it->second.assign(value);
  }
  return Status::Ok();
}

Status MemoryViewStore::Delete(std::string_view key) {
  auto it = entries_.find(key);
  if (it != entries_.end()) entries_.erase(it);
  return Status::Ok();
}

Status MemoryViewStore::Scan(std::string_view prefix,
                             const std::function<bool(std::string_view, std::string_view)>& visit) {
  for (auto it = entries_.lower_bound(prefix); it != entries_.end(); ++it) {
    if (std::string_view(it->first).substr(0, prefix.size()) != prefix) break;
    if (!visit(it->first, it->second)) break;
  }
  return Status::Ok();
}

Status MemoryViewStore::ScanRange(
    std::string_view begin, std::string_view end, bool backward,
    const std::function<bool(std::string_view, std::string_view)>& visit) {
  if (begin >= end) return Status::Ok();
  auto first = entries_.lower_bound(begin);
  auto last = entries_.lower_bound(end);
  if (!backward) {
    for (auto it = first; it != last; ++it) {
      if (!visit(it->first, it->second)) break;
    }
    return Status::Ok();
  }
  for (auto it = last; it != first;) {
    --it;
    if (!visit(it->first, it->second)) break;
  }
  return Status::Ok();
}

std::string PrefixedKey(std::string_view prefix, std::string_view id) {
  std::string key;
  key.reserve(prefix.size() + id.size());
  key += prefix;
  key += id;
  return key;
}

void SerializeDeterministic(const google::protobuf::MessageLite& message, std::string* out) {
  const size_t size = message.ByteSizeLong();
  out->resize(size);
  google::protobuf::io::ArrayOutputStream array(out->data(), static_cast<int>(size));
  google::protobuf::io::CodedOutputStream coded(&array);
  coded.SetSerializationDeterministic(true);
  message.SerializeWithCachedSizes(&coded);
}

Status ParseView(std::string_view bytes, std::string_view key,
                 google::protobuf::MessageLite* message) {
  if (message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return Status::Ok();
  return Status::Corruption("unparsable " + message->GetTypeName() + " at key '" +
                            std::string(key) + "'");
}

Result<google::protobuf::MessageLite*> ViewStore::OpenMessage(
    std::string_view key, google::protobuf::MessageLite* scratch) {
  CAIRN_ASSIGN_OR_RETURN(bool exists, GetMessage(key, scratch));
  return exists ? scratch : nullptr;
}

Result<bool> MemoryViewStore::GetMessage(std::string_view key,
                                         google::protobuf::MessageLite* message) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  CAIRN_RETURN_IF_ERROR(ParseView(it->second, key, message));
  return true;
}

Status MemoryViewStore::PutMessage(std::string_view key,
                                   const google::protobuf::MessageLite& message) {
  auto it = entries_.find(key);
  if (it == entries_.end()) it = entries_.emplace(std::string(key), std::string()).first;
  SerializeDeterministic(message, &it->second);
  return Status::Ok();
}

Result<std::vector<std::optional<std::string>>> ViewReader::GetMany(
    const std::vector<std::string>& keys) {
  std::vector<std::optional<std::string>> values;
  values.reserve(keys.size());
  for (const auto& key : keys) {
    CAIRN_ASSIGN_OR_RETURN(auto value, Get(key));
    values.push_back(std::move(value));
  }
  return values;
}

Result<bool> GetMessage(ViewReader& reader, std::string_view key,
                        google::protobuf::MessageLite* message) {
  CAIRN_ASSIGN_OR_RETURN(auto bytes, reader.Get(key));
  if (!bytes) return false;
  CAIRN_RETURN_IF_ERROR(ParseView(*bytes, key, message));
  return true;
}

void AppendBigEndian64(std::string* out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

uint64_t DecodeBigEndian64(std::string_view bytes) {
  uint64_t value = 0;
  for (unsigned char byte : bytes.substr(0, 8)) value = (value << 8) | byte;
  return value;
}

void AppendBigEndian32(std::string* out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

Result<std::string> DigestViews(ViewReader& reader) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                  &EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    return Status::Internal("SHA-256 initialisation failed");
  }
  // The framed keys and values are gathered and hashed 64 KiB at a time: the same bytes in the
  // same order, so the same digest, in one EVP call per chunk instead of four per entry: hashing
  // was a large share of a digest's CPU (docs/benchmarks.md, "Projections: snapshots and
  // compactions").
  constexpr size_t kHashChunk = size_t{64} << 10;
  bool hashed = true;
  std::string pending;
  pending.reserve(2 * kHashChunk);
  auto hash_pending = [&] {
    hashed = hashed && EVP_DigestUpdate(context.get(), pending.data(), pending.size()) == 1;
    pending.clear();
  };
  auto hash_framed = [&](std::string_view bytes) {
    AppendBigEndian64(&pending, bytes.size());
    pending.append(bytes);
    if (pending.size() >= kHashChunk) hash_pending();
  };
  CAIRN_RETURN_IF_ERROR(reader.Scan("", [&](std::string_view key, std::string_view value) {
    if (IsBookkeepingKey(key)) return true;
    hash_framed(key);
    hash_framed(value);
    return hashed;
  }));
  hash_pending();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!hashed || EVP_DigestFinal_ex(context.get(), digest, &length) != 1) {
    return Status::Internal("SHA-256 update failed");
  }
  return HexLower(digest, length);
}

std::vector<std::string> SplitIds(std::string_view list) {
  std::vector<std::string> ids;
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find('\n', start);
    if (end == std::string_view::npos) end = list.size();
    if (end > start) ids.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return ids;
}

std::string JoinIds(const std::vector<std::string>& ids) {
  std::string list;
  for (const auto& id : ids) {
    if (!list.empty()) list.push_back('\n');
    list += id;
  }
  return list;
}

}  // namespace cairn::projections
