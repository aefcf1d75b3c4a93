#include "base/encoding.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdint>
#include <sstream>

namespace cairn {

bool IsBase64Character(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

namespace {

// EVP's block functions take int lengths, so large contents go through in chunks; the chunk
// sizes are whole base64 quanta (4 characters, 3 bytes) so only the last chunk can be padded.
constexpr size_t kBase64ChunkCharacters = 4 << 20;
constexpr size_t kBase64ChunkBytes = 3 << 20;

}  // namespace

bool HasControlCharacter(std::string_view text, bool blanks_too) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F || (blanks_too && byte == ' ')) return true;
  }
  return false;
}

std::string AsciiLower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

namespace {

// The length of the well-formed UTF-8 sequence at the front of `text` (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), or 0 when there is none.
size_t Utf8SequenceLength(std::string_view text) {
  const auto lead = static_cast<unsigned char>(text[0]);
  if (lead < 0x80) return 1;
  size_t length = 0;
  uint32_t code_point = 0;
  uint32_t smallest = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, code_point = lead & 0x1F, smallest = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code_point = lead & 0x0F, smallest = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code_point = lead & 0x07, smallest = 0x10000;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    const auto continuation = static_cast<unsigned char>(text[i]);
    if ((continuation & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (continuation & 0x3F);
  }
  const bool surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
  return code_point < smallest || code_point > 0x10FFFF || surrogate ? 0 : length;
}

}  // namespace

std::string ValidUtf8Prefix(std::string_view text, size_t max_bytes) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  while (!text.empty()) {
    const size_t length = Utf8SequenceLength(text);
    const std::string_view character = length == 0 ? kReplacement : text.substr(0, length);
    if (character.size() > max_bytes - out.size()) break;
    out.append(character);
    text.remove_prefix(length == 0 ? 1 : length);
  }
  return out;
}

std::string HexLower(const unsigned char* bytes, size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    hex.push_back(kHex[bytes[i] >> 4]);
    hex.push_back(kHex[bytes[i] & 0xf]);
  }
  return hex;
}

Result<std::string> Sha256Hex(std::string_view bytes) {
  Sha256 hash;
  hash.Update(bytes);
  return hash.FinishHex();
}

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  ok_ = context_ != nullptr && EVP_DigestInit_ex(context_, EVP_sha256(), nullptr) == 1;
}

Sha256::~Sha256() { EVP_MD_CTX_free(context_); }

void Sha256::Update(std::string_view bytes) {
  ok_ = ok_ && EVP_DigestUpdate(context_, bytes.data(), bytes.size()) == 1;
}

Result<std::string> Sha256::FinishHex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  ok_ = ok_ && EVP_DigestFinal_ex(context_, digest, &length) == 1;
  if (!ok_) return Status::Internal("SHA-256 failed");
  ok_ = false;  // finished: a second call is an error, not the digest of nothing
  return HexLower(digest, length);
}

std::string Base64Encode(std::string_view bytes) {
  // EVP_EncodeBlock appends a NUL, hence the extra byte that is cut below.
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');
  size_t written = 0;
  for (size_t start = 0; start < bytes.size(); start += kBase64ChunkBytes) {
    const size_t length = std::min(kBase64ChunkBytes, bytes.size() - start);
    written += static_cast<size_t>(EVP_EncodeBlock(
        reinterpret_cast<unsigned char*>(out.data() + written),
        reinterpret_cast<const unsigned char*>(bytes.data() + start), static_cast<int>(length)));
  }
  out.resize(written);
  return out;
}

// Checked here because EVP_DecodeBlock accepts '=' anywhere and surrounding whitespace.
std::optional<size_t> Base64DecodedSize(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    if (!IsBase64Character(text[i])) return std::nullopt;
  }
  return text.size() / 4 * 3 - padding;
}

Result<std::string> Base64Decode(std::string_view text) {
  const std::optional<size_t> size = Base64DecodedSize(text);
  if (!size) return Status::InvalidArgument("not padded standard base64");
  // EVP_DecodeBlock writes 3 bytes per quantum, padding included; the excess is cut below.
  std::string out(text.size() / 4 * 3, '\0');
  size_t written = 0;
  for (size_t start = 0; start < text.size(); start += kBase64ChunkCharacters) {
    const size_t length = std::min(kBase64ChunkCharacters, text.size() - start);
    const int produced = EVP_DecodeBlock(
        reinterpret_cast<unsigned char*>(out.data() + written),
        reinterpret_cast<const unsigned char*>(text.data() + start), static_cast<int>(length));
    if (produced < 0) return Status::Internal("EVP_DecodeBlock refused checked base64");
    written += static_cast<size_t>(produced);
  }
  out.resize(*size);
  return out;
}

std::string FormatNumber(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

bool IsValidUtf8(std::string_view text) {
  // One decoder for both questions: valid text is what ValidUtf8Prefix leaves as it is.
  return ValidUtf8Prefix(text) == text;
}

}  // namespace cairn
