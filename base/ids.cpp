#include "base/ids.h"

#include <openssl/rand.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace cairn {

bool IsCanonicalUuid(const std::string& text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

namespace {

// CSPRNG bytes drawn a block at a time per thread: one RAND_bytes call per 16-byte id took a
// noticeable share of a busy master's CPU (OpenSSL's DRBG takes a lock and reseeds its checks on
// every call; docs/benchmarks.md, "HTTP edge"). The block is never reused, so each id is as
// unpredictable as before.
void RandomBytes(unsigned char* out, size_t size) {
  constexpr size_t kBlockBytes = 4096;
  thread_local unsigned char block[kBlockBytes];
  thread_local size_t used = kBlockBytes;
  if (size > kBlockBytes - used) {
    if (RAND_bytes(block, kBlockBytes) != 1) {
      // OpenSSL's CSPRNG failing is an environment fault we cannot recover from sensibly.
      std::abort();
    }
    used = 0;
  }
  std::memcpy(out, block + used, size);
  std::memset(block + used, 0, size);  // handed out once
  used += size;
}

}  // namespace

std::string NewUuid() {
  unsigned char bytes[16];
  RandomBytes(bytes, sizeof bytes);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(36, '-');
  size_t at = 0;
  for (size_t i = 0; i < sizeof bytes; ++i) {
    if (at == 8 || at == 13 || at == 18 || at == 23) ++at;  // the dashes stay
    out[at++] = kHex[bytes[i] >> 4];
    out[at++] = kHex[bytes[i] & 0x0f];
  }
  return out;
}

}  // namespace cairn
