#include "common/sha256.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace dmlbench {
namespace {

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

struct FileCloser {
  void operator()(std::FILE* file) const noexcept { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// OpenSSL's own description of its most recent error on this thread.
Sha256Error OpenSslFailure(const char* call) {
  char reason[256] = "unknown error";
  if (unsigned long code = ERR_get_error(); code != 0)
    ERR_error_string_n(code, reason, sizeof reason);
  return Sha256Error(std::string("sha256: ") + call + " failed: " + reason);
}

Sha256Error ReadFailure(const std::string& path, int error) {
  return Sha256Error("cannot read " + path + ": " + std::strerror(error));
}

// Feeds the file's bytes to `hash` through `chunk`, whose size is the most
// held in memory at once.
void UpdateWithFile(Sha256& hash, const std::string& path, std::vector<std::uint8_t>& chunk) {
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) throw ReadFailure(path, errno);
  while (true) {
    const std::size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get());
    if (std::ferror(file.get())) throw ReadFailure(path, errno);
    hash.Update(std::span<const std::uint8_t>(chunk.data(), got));
    if (got < chunk.size()) return;
  }
}

}  // namespace

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (!context_) throw OpenSslFailure("EVP_MD_CTX_new");
  if (EVP_DigestInit_ex(context_, EVP_sha256(), nullptr) != 1) {
    Sha256Error error = OpenSslFailure("EVP_DigestInit_ex");
    EVP_MD_CTX_free(context_);
    throw error;
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(context_); }

void Sha256::Update(std::span<const std::uint8_t> bytes) {
  if (EVP_DigestUpdate(context_, bytes.data(), bytes.size()) != 1)
    throw OpenSslFailure("EVP_DigestUpdate");
}

void Sha256::Update(std::string_view bytes) {
  Update(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                       bytes.size()));
}

std::string Sha256::HexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_, digest, &length) != 1)
    throw OpenSslFailure("EVP_DigestFinal_ex");
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(2 * std::size_t{length}, '0');
  for (unsigned int i = 0; i < length; ++i) {
    hex[2 * i] = kDigits[digest[i] >> 4];
    hex[2 * i + 1] = kDigits[digest[i] & 0xf];
  }
  return hex;
}

std::string Sha256Hex(std::string_view bytes) {
  Sha256 hash;
  hash.Update(bytes);
  return hash.HexDigest();
}

std::string Sha256Hex(std::span<const std::uint8_t> bytes) {
  Sha256 hash;
  hash.Update(bytes);
  return hash.HexDigest();
}

std::string Sha256FileHex(const std::string& path) { return Sha256FilesHex({path}); }

std::string Sha256FilesHex(const std::vector<std::string>& paths) {
  Sha256 hash;
  std::vector<std::uint8_t> chunk(kChunkBytes);
  for (const std::string& path : paths) UpdateWithFile(hash, path, chunk);
  return hash.HexDigest();
}

}  // namespace dmlbench
