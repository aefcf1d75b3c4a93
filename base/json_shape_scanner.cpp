#include "base/json_shape_scanner.h"

#include <cctype>
#include <cstring>
#include <utility>

namespace cairn {

namespace {

// A key longer than this is named by its first bytes: enough for any real key, and the name of
// a hostile one stays short in the answer.
constexpr size_t kKeyBytesKept = 128;

}  // namespace

JsonShapeScanner::JsonShapeScanner(const DocumentLimits& limits, std::string what)
    : limits_(limits), what_(std::move(what)) {}

Status JsonShapeScanner::Refuse(Status refusal) {
  refused_ = std::move(refusal);
  return refused_;
}

size_t JsonShapeScanner::ContinueString(std::string_view piece, size_t i) {
  // This piece's part of the string starts at `i`; backslashes before `i` are summed up in
  // odd_backslashes_. memchr to each quote runs far faster than a loop over a long string.
  const size_t start = i;
  size_t end = i;
  while (true) {
    const void* quote = std::memchr(piece.data() + end, '"', piece.size() - end);
    if (quote == nullptr) {
      end = piece.size();
      break;
    }
    end = static_cast<size_t>(static_cast<const char*>(quote) - piece.data());
    size_t backslashes = 0;
    while (end - backslashes > start && piece[end - backslashes - 1] == '\\') ++backslashes;
    bool escaped = backslashes % 2 == 1;
    if (end - backslashes == start && odd_backslashes_) escaped = !escaped;
    if (!escaped) break;
    ++end;
  }
  const std::string_view part = piece.substr(start, end - start);
  string_bytes_ += part.size();
  if (string_head_.size() < kKeyBytesKept) {
    string_head_.append(part.substr(0, kKeyBytesKept - string_head_.size()));
  }
  if (end == piece.size()) {
    // The string goes on: carry the parity of the backslashes it ends in.
    size_t backslashes = 0;
    while (backslashes < part.size() && part[part.size() - backslashes - 1] == '\\') ++backslashes;
    odd_backslashes_ = backslashes == part.size() ? (odd_backslashes_ != (backslashes % 2 == 1))
                                                  : backslashes % 2 == 1;
    return end;
  }
  in_string_ = false;
  odd_backslashes_ = false;
  string_just_ended_ = true;
  return end + 1;
}

Status JsonShapeScanner::Feed(std::string_view piece) {
  if (!refused_.ok()) return refused_;
  size_t i = 0;
  while (i < piece.size()) {
    if (in_string_) {
      i = ContinueString(piece, i);
      if (string_bytes_ > limits_.max_string_bytes && !string_exempt_) {
        return Refuse(Status::InvalidArgument(
            ErrorPrefix(what_) + (last_key_.empty() ? "a string" : last_key_) + ": larger than " +
            std::to_string(limits_.max_string_bytes) + " bytes"));
      }
      continue;
    }
    const char c = piece[i++];
    if (string_just_ended_) {
      if (std::isspace(static_cast<unsigned char>(c))) continue;
      string_just_ended_ = false;
      if (c == ':') {
        // The string was a key.
        last_key_ = string_head_;
        large_key_value_next_ = !limits_.large_string_key.empty() &&
                                string_bytes_ == limits_.large_string_key.size() &&
                                string_head_ == limits_.large_string_key;
        continue;
      }
      large_key_value_next_ = false;  // it was a value
    }
    switch (c) {
      case '"':
        in_string_ = true;
        string_exempt_ = large_key_value_next_;
        string_bytes_ = 0;
        string_head_.clear();
        break;
      case '[':
      case '{':
        large_key_value_next_ = false;
        if (++depth_ > limits_.max_depth) {
          return Refuse(Status::InvalidArgument(ErrorPrefix(what_) + "nested deeper than " +
                                                std::to_string(limits_.max_depth) + " levels"));
        }
        ++values_;
        break;
      case ']':
      case '}':
        large_key_value_next_ = false;
        --depth_;
        break;
      case ',':
        large_key_value_next_ = false;
        if (++values_ > limits_.max_nodes) {
          return Refuse(Status::InvalidArgument(ErrorPrefix(what_) + "more than " +
                                                std::to_string(limits_.max_nodes) + " values"));
        }
        break;
      default:
        break;
    }
  }
  return Status::Ok();
}

}  // namespace cairn
