#include "base/ssh_keys.h"

#include <openssl/sha.h>
#include <sodium.h>

#include <cstdint>

#include "base/encoding.h"
#include "base/task_secrets.h"

namespace cairn {
namespace {

constexpr std::string_view kKeyType = "ssh-ed25519";
constexpr size_t kPemLineWidth = 70;  // where ssh-keygen wraps the base64
// The private section is padded to the cipher's block size; "none" counts as 8.
constexpr size_t kUnencryptedBlockBytes = 8;

// SSH's wire encodings (RFC 4251 §5): uint32 big-endian, and string = uint32 length + bytes.
void AppendUint32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
}

void AppendString(std::string& out, std::string_view bytes) {
  AppendUint32(out, static_cast<uint32_t>(bytes.size()));
  out.append(bytes);
}

std::string_view AsChars(const unsigned char* bytes, size_t size) {
  return {reinterpret_cast<const char*>(bytes), size};
}

// The check int that tells a reader the (here unencrypted) private section decrypted right. It is
// random in ssh-keygen; taken from a hash of the seed here so that the file is a function of the
// seed, without showing any of the seed's bytes.
uint32_t CheckInt(std::string_view seed) {
  std::string message = "cairn ssh check int";
  message.append(seed);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest);
  return uint32_t{digest[0]} << 24 | uint32_t{digest[1]} << 16 | uint32_t{digest[2]} << 8 |
         uint32_t{digest[3]};
}

std::string WrapPem(std::string_view base64) {
  std::string pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
  for (size_t start = 0; start < base64.size(); start += kPemLineWidth) {
    pem.append(base64.substr(start, kPemLineWidth)).push_back('\n');
  }
  pem.append("-----END OPENSSH PRIVATE KEY-----\n");
  return pem;
}

}  // namespace

Result<SshKeyPair> SshKeyPairFromSeed(std::string_view seed32, std::string_view comment) {
  if (seed32.size() != crypto_sign_SEEDBYTES) {
    return Status::InvalidArgument("an Ed25519 seed is " + std::to_string(crypto_sign_SEEDBYTES) +
                                   " bytes, not " + std::to_string(seed32.size()));
  }
  if (comment.find_first_of("\r\n") != std::string_view::npos) {
    return Status::InvalidArgument("an SSH key's comment must be one line");
  }
  // Picks the fastest implementations; fails only without a source of randomness.
  if (sodium_init() < 0) return Status::Internal("libsodium cannot be initialised");
  unsigned char public_key[crypto_sign_PUBLICKEYBYTES];
  unsigned char secret_key[crypto_sign_SECRETKEYBYTES];  // seed || public key, as OpenSSH keeps it
  crypto_sign_seed_keypair(public_key, secret_key,
                           reinterpret_cast<const unsigned char*>(seed32.data()));

  std::string public_blob;
  AppendString(public_blob, kKeyType);
  AppendString(public_blob, AsChars(public_key, sizeof public_key));

  std::string private_section;
  const uint32_t check = CheckInt(seed32);
  AppendUint32(private_section, check);
  AppendUint32(private_section, check);
  AppendString(private_section, kKeyType);
  AppendString(private_section, AsChars(public_key, sizeof public_key));
  AppendString(private_section, AsChars(secret_key, sizeof secret_key));
  AppendString(private_section, comment);
  for (char pad = 1; private_section.size() % kUnencryptedBlockBytes != 0; ++pad) {
    private_section.push_back(pad);
  }
  sodium_memzero(secret_key, sizeof secret_key);  // not left on the stack; the result has it

  std::string file("openssh-key-v1", sizeof "openssh-key-v1");  // the magic ends with its NUL
  AppendString(file, "none");                                   // cipher
  AppendString(file, "none");                                   // KDF
  AppendString(file, "");                                       // KDF options
  AppendUint32(file, 1);                                        // number of keys
  AppendString(file, public_blob);
  AppendString(file, private_section);

  SshKeyPair pair;
  pair.private_key = WrapPem(Base64Encode(file));
  pair.public_key = std::string(kKeyType) + " " + Base64Encode(public_blob);
  if (!comment.empty()) pair.public_key.append(" ").append(comment);
  return pair;
}

Result<SshKeyPair> TaskSshKeyPair(std::string_view agent_token, std::string_view purpose,
                                  std::string_view task_id) {
  const std::string comment =
      std::string(purpose == kShellHostKeyPurpose ? "cairn-host-" : "cairn-shell-") +
      std::string(task_id);
  return SshKeyPairFromSeed(DeriveTaskSecret(agent_token, purpose, task_id), comment);
}

}  // namespace cairn
