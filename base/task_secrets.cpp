#include "base/task_secrets.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <cstdlib>

#include "base/encoding.h"

namespace cairn {
namespace {

// SHA-256's block size: RFC 2104 replaces a longer key by its digest.
constexpr size_t kSha256BlockBytes = 64;
constexpr size_t kTaskTokenBytes = 16;

}  // namespace

std::string HmacSha256(std::string_view key, std::string_view data) {
  // Shortening a long key here is what HMAC does itself; doing it first keeps the key's length
  // within the int OpenSSL takes.
  unsigned char key_digest[SHA256_DIGEST_LENGTH];
  if (key.size() > kSha256BlockBytes) {
    SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), key_digest);
    key = std::string_view(reinterpret_cast<const char*>(key_digest), sizeof key_digest);
  }
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_size = 0;
  // HMAC fails only when OpenSSL cannot allocate or lacks SHA-256: not a state to continue in.
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac,
           &mac_size) == nullptr) {
    std::abort();
  }
  return std::string(reinterpret_cast<const char*>(mac), mac_size);
}

std::string DeriveTaskSecret(std::string_view cluster_secret, std::string_view purpose,
                             std::string_view task_id) {
  std::string message;
  message.reserve(purpose.size() + 1 + task_id.size());
  message.append(purpose).push_back('\0');
  message.append(task_id);
  return HmacSha256(cluster_secret, message);
}

std::string DeriveTaskToken(std::string_view cluster_secret, std::string_view purpose,
                            std::string_view task_id) {
  const std::string secret = DeriveTaskSecret(cluster_secret, purpose, task_id);
  return HexLower(reinterpret_cast<const unsigned char*>(secret.data()), kTaskTokenBytes);
}

}  // namespace cairn
