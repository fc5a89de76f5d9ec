#include "orchestrator/core/sha256.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace dmlbench {
namespace {

struct EvpMdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const noexcept { EVP_MD_CTX_free(ctx); }
};
using EvpMdCtx = std::unique_ptr<EVP_MD_CTX, EvpMdCtxDeleter>;

struct FileCloser {
  void operator()(std::FILE* file) const noexcept { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// OpenSSL's own description of its most recent error, for messages.
std::string OpenSslFailure(const char* what) {
  char reason[256] = "unknown error";
  if (unsigned long code = ERR_get_error(); code != 0) {
    ERR_error_string_n(code, reason, sizeof reason);
  }
  return std::string("sha256: ") + what + " failed: " + reason;
}

// Incremental digest: Update() any number of times, then Finish() once.
class Digest {
 public:
  Digest() : ctx_(EVP_MD_CTX_new()) {
    if (!ctx_) throw Sha256Error(OpenSslFailure("EVP_MD_CTX_new"));
    if (EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) {
      throw Sha256Error(OpenSslFailure("EVP_DigestInit_ex"));
    }
  }

  void Update(const void* data, std::size_t size) {
    if (EVP_DigestUpdate(ctx_.get(), data, size) != 1) {
      throw Sha256Error(OpenSslFailure("EVP_DigestUpdate"));
    }
  }

  std::string Finish() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(ctx_.get(), digest, &length) != 1) {
      throw Sha256Error(OpenSslFailure("EVP_DigestFinal_ex"));
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex(2 * length, '0');
    for (unsigned int i = 0; i < length; ++i) {
      hex[2 * i] = kHex[digest[i] >> 4];
      hex[2 * i + 1] = kHex[digest[i] & 0xf];
    }
    return hex;
  }

 private:
  EvpMdCtx ctx_;
};

constexpr std::size_t kChunkBytes = 1 << 20;

// Feeds the file's bytes to `digest` through `chunk`.
void UpdateWithFile(Digest& digest, const std::string& path, std::vector<char>& chunk) {
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) throw Sha256Error("cannot read " + path + ": " + std::strerror(errno));
  while (true) {
    std::size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get());
    digest.Update(chunk.data(), got);
    if (got < chunk.size()) break;
  }
  if (std::ferror(file.get())) {
    throw Sha256Error("cannot read " + path + ": " + std::strerror(errno));
  }
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  Digest digest;
  digest.Update(data.data(), data.size());
  return digest.Finish();
}

std::string Sha256FileHex(const std::string& path) { return Sha256FilesHex({path}); }

std::string Sha256FilesHex(const std::vector<std::string>& paths) {
  Digest digest;
  std::vector<char> chunk(kChunkBytes);
  for (const std::string& path : paths) UpdateWithFile(digest, path, chunk);
  return digest.Finish();
}

}  // namespace dmlbench
