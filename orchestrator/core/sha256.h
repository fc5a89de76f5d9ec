// Sha256: hex SHA-256 digests of strings and files, through OpenSSL's EVP
// interface (the only place the orchestrator includes OpenSSL). It owns no
// state beyond one call; every function is safe to call from any thread.
// Run keys, matrix checksums and trainer checksums are all computed here.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_SHA256_H_
#define DMLBENCH_ORCHESTRATOR_CORE_SHA256_H_

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/error.h"

namespace dmlbench {

// Thrown when a file cannot be read or OpenSSL reports a failure. what() is
// the whole message, e.g. "cannot read trainer/missing: No such file or
// directory".
class Sha256Error : public Error {
 public:
  using Error::Error;
};

// 64 lowercase hex digits of SHA-256(data).
std::string Sha256Hex(std::string_view data);

// 64 lowercase hex digits of SHA-256 of the file's bytes, read in chunks (the
// file is never held in memory whole). Throws Sha256Error.
std::string Sha256FileHex(const std::string& path);

// 64 lowercase hex digits of SHA-256 of the files' bytes one after another
// (a dataset of several files as one checksum), read in chunks. Throws
// Sha256Error.
std::string Sha256FilesHex(const std::vector<std::string>& paths);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_SHA256_H_
