// Sha256: SHA-256 digests (64 lowercase hex digits) of bytes, strings and
// files for the whole project, over OpenSSL's EVP interface, which stays out
// of this header. Knows nothing of what it hashes. A Sha256 object is used by
// one thread at a time; the free functions are safe from any thread.
#ifndef DMLBENCH_COMMON_SHA256_H_
#define DMLBENCH_COMMON_SHA256_H_

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace dmlbench {

// The one exception type of this module: a file cannot be read ("cannot read
// trainer/missing: No such file or directory") or OpenSSL reports a failure
// ("sha256: EVP_DigestUpdate failed: <OpenSSL's error text>").
class Sha256Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An incremental digest: Update() any number of times, then HexDigest() once.
class Sha256 {
 public:
  Sha256();   // throws Sha256Error
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  // Throw Sha256Error.
  void Update(std::span<const std::uint8_t> bytes);
  void Update(std::string_view bytes);

  // Finishes the digest; nothing may be added after it. Throws Sha256Error.
  std::string HexDigest();

 private:
  evp_md_ctx_st* context_;   // owned
};

// SHA-256 of the bytes given. Throw Sha256Error (only if OpenSSL fails).
std::string Sha256Hex(std::string_view bytes);
std::string Sha256Hex(std::span<const std::uint8_t> bytes);

// SHA-256 of the file's bytes, read in chunks (the file is never held in
// memory whole). Throws Sha256Error.
std::string Sha256FileHex(const std::string& path);

// SHA-256 of the files' bytes one after another (several files as one
// checksum, e.g. a dataset), read in chunks. Throws Sha256Error naming the
// first file that cannot be read.
std::string Sha256FilesHex(const std::vector<std::string>& paths);

}  // namespace dmlbench

#endif  // DMLBENCH_COMMON_SHA256_H_
