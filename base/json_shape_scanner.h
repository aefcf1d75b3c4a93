// The shape check of a JSON document (base/document_limits.h's CheckJsonShape) over text that
// arrives in pieces: a request body as the server reads it. A body that breaks a limit is refused
// when the piece that breaks it arrives, before the rest is read or stored, so a 16 MiB string
// costs the master the first MiB, not sixteen. Pure; one scanner per document, not thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/document_limits.h"
#include "base/status.h"

namespace cairn {

class JsonShapeScanner {
 public:
  // `what` prefixes every refusal ("body").
  JsonShapeScanner(const DocumentLimits& limits, std::string what);

  // Scans the next piece of the document. Returns InvalidArgument naming the limit as soon as
  // one is broken: nested deeper than limits.max_depth, more than limits.max_nodes values, or a
  // string (key or value) longer than limits.max_string_bytes unless it is the value of
  // limits.large_string_key. Once refused, every later call returns the same refusal. However
  // the text is cut into pieces, the verdict is the same. Syntax errors are left to the parser.
  Status Feed(std::string_view piece);

 private:
  // Continues the string being read from piece[i]; returns the index after it ends, or
  // piece.size() when it goes on in the next piece.
  size_t ContinueString(std::string_view piece, size_t i);
  Status Refuse(Status refusal);

  DocumentLimits limits_;
  std::string what_;
  Status refused_;

  int depth_ = 0;
  // Every value but the first is preceded by a ',' or opens its container: counting those is a
  // bound on the values the parser would build.
  size_t values_ = 1;
  // Whether the next value is large_string_key's. Only that value may be long: the exemption
  // must not reach a later string of another container (the json_document fuzz target caught
  // [{"content": ""}, "<16 MiB>"] passing).
  bool large_key_value_next_ = false;

  bool in_string_ = false;
  bool string_exempt_ = false;      // the string being read is large_string_key's value
  size_t string_bytes_ = 0;         // bytes of the string being read, so far
  bool odd_backslashes_ = false;    // it ends (so far) in an odd run of backslashes
  std::string string_head_;         // its first bytes, to name it if it turns out a key
  bool string_just_ended_ = false;  // a ':' after it (spaces apart) would make it a key
  std::string last_key_;            // named in the refusal of an over-long string
};

}  // namespace cairn
