#include "base/sealed_secrets.h"

#include <sodium.h>

#include <cstdlib>

#include "base/encoding.h"
#include "base/task_secrets.h"

namespace cairn {
namespace {

// Each its own key, so that the nonces say nothing about the encryption key.
constexpr std::string_view kSealKeyPurpose = "sealed-secrets-key";
constexpr std::string_view kSealNoncePurpose = "sealed-secrets-nonce";

}  // namespace

bool IsSealed(std::string_view text) {
  return text.substr(0, kSealedPrefix.size()) == kSealedPrefix;
}

SecretSealer::SecretSealer(std::string_view cluster_secret) {
  if (cluster_secret.empty()) return;
  // Once per sealer, not per value: it fails only when the system cannot give randomness.
  if (sodium_init() < 0) std::abort();
  key_ = DeriveTaskSecret(cluster_secret, kSealKeyPurpose, "");
  nonce_key_ = DeriveTaskSecret(cluster_secret, kSealNoncePurpose, "");
  static_assert(crypto_secretbox_KEYBYTES == 32, "HMAC-SHA-256 derives the key");
}

std::string SecretSealer::Seal(std::string_view plaintext) const {
  if (!has_key() || IsSealed(plaintext)) return std::string(plaintext);
  const std::string nonce =
      HmacSha256(nonce_key_, plaintext).substr(0, crypto_secretbox_NONCEBYTES);
  std::string box(crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES + plaintext.size(), '\0');
  box.replace(0, nonce.size(), nonce);
  auto* out = reinterpret_cast<unsigned char*>(box.data()) + crypto_secretbox_NONCEBYTES;
  crypto_secretbox_easy(out, reinterpret_cast<const unsigned char*>(plaintext.data()),
                        plaintext.size(), reinterpret_cast<const unsigned char*>(nonce.data()),
                        reinterpret_cast<const unsigned char*>(key_.data()));
  return std::string(kSealedPrefix) + Base64Encode(box);
}

Result<std::string> SecretSealer::UnsealText(std::string_view text) const {
  std::string out;
  size_t at = 0;
  while (true) {
    const size_t found = text.find(kSealedPrefix, at);
    if (found == std::string_view::npos) break;
    out.append(text.substr(at, found - at));
    size_t end = found + kSealedPrefix.size();
    while (end < text.size() && (IsBase64Character(text[end]) || text[end] == '=')) ++end;
    const std::string_view encoded =
        text.substr(found + kSealedPrefix.size(), end - found - kSealedPrefix.size());
    if (!has_key()) {
      return Status::FailedPrecondition(
          "a sealed credential cannot be opened here: no cluster secret (agent token) is known");
    }
    auto box = Base64Decode(encoded);
    if (!box.ok() || box->size() < crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES) {
      return Status::FailedPrecondition("a sealed credential is damaged");
    }
    std::string plaintext(box->size() - crypto_secretbox_NONCEBYTES - crypto_secretbox_MACBYTES,
                          '\0');
    const auto* nonce = reinterpret_cast<const unsigned char*>(box->data());
    if (crypto_secretbox_open_easy(reinterpret_cast<unsigned char*>(plaintext.data()),
                                   nonce + crypto_secretbox_NONCEBYTES,
                                   box->size() - crypto_secretbox_NONCEBYTES, nonce,
                                   reinterpret_cast<const unsigned char*>(key_.data())) != 0) {
      return Status::FailedPrecondition(
          "a sealed credential does not open under this cluster's key: it was sealed under "
          "another agent token (give the credential again) or altered");
    }
    out += plaintext;
    at = end;
  }
  if (at == 0) return std::string(text);
  out.append(text.substr(at));
  return out;
}

}  // namespace cairn
