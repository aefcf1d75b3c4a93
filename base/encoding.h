// Byte encodings the whole code base shares: hex, SHA-256, strict standard base64, valid UTF-8.
// Pure functions, safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

struct evp_md_ctx_st;  // <openssl/types.h>: EVP_MD_CTX

namespace cairn {

// Lowercase hex of raw bytes (digests in ids and file names).
std::string HexLower(const unsigned char* bytes, size_t size);

// `text` with ASCII letters lowered (HTTP header names, names compared ignoring case); other
// bytes, UTF-8 included, are kept.
std::string AsciiLower(std::string text);

// Whether `text` holds an ASCII control character (below 0x20, tab included, or DEL), or a space
// when `blanks_too`: what names, paths and header values may not carry.
bool HasControlCharacter(std::string_view text, bool blanks_too = false);

// `text` made valid UTF-8 of at most `max_bytes`: each byte that does not begin a well-formed
// sequence becomes U+FFFD, and the text ends before the first character that would not fit,
// never inside one. For anything from outside that goes into a `string` field of an event: protobuf
// refuses to parse a message whose string is not UTF-8, so one bad byte (a cut character, a
// percent-decoded %FF) would make the whole log unreadable.
std::string ValidUtf8Prefix(std::string_view text, size_t max_bytes = std::string_view::npos);

// Lowercase hex SHA-256 of `bytes`.
Result<std::string> Sha256Hex(std::string_view bytes);

// SHA-256 of bytes that come in pieces (a file read a block at a time).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(std::string_view bytes);
  // Lowercase hex of everything given to Update; once.
  Result<std::string> FinishHex();

 private:
  ::evp_md_ctx_st* context_;  // OpenSSL's EVP_MD_CTX
  bool ok_;
};

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF): what JSON may carry.
bool IsValidUtf8(std::string_view text);

// One of standard base64's 64 characters ('=' padding is not one).
bool IsBase64Character(char c);

// Padded standard base64 (RFC 4648 §4), any length.
std::string Base64Encode(std::string_view bytes);

// The exact decoded size of padded standard base64 `text`, or nullopt when `text` is anything
// else (whitespace, '=' inside, the URL-safe alphabet).
std::optional<size_t> Base64DecodedSize(std::string_view text);

// Decodes `text`; InvalidArgument when Base64DecodedSize refuses it.
Result<std::string> Base64Decode(std::string_view text);

// A number as a person writes it: "3", "0.25", "1e+20" (ostream's default, 6 significant digits).
std::string FormatNumber(double value);

}  // namespace cairn
