#include "orchestrator/store/gzip.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "orchestrator/store/store.h"

namespace dmlbench {
namespace {

constexpr size_t kChunkBytes = 64 * 1024;

// Owns a gzFile; closes it at destruction (the result of an explicit
// Close() is what tells whether a write went through).
class GzFile {
 public:
  explicit GzFile(gzFile file) : file_(file) {}
  ~GzFile() {
    if (file_ != nullptr) gzclose(file_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  gzFile get() const { return file_; }
  // Closes now; false when zlib could not flush.
  bool Close() {
    const int result = gzclose(file_);
    file_ = nullptr;
    return result == Z_OK;
  }

 private:
  gzFile file_;
};

[[noreturn]] void Fail(const std::string& path, const std::string& what) { throw StoreError(path + ": " + what, -1); }

std::string ZlibError(gzFile file) {
  int code = Z_OK;
  const char* message = gzerror(file, &code);
  return code == Z_ERRNO ? std::strerror(errno) : std::string(message);
}

}  // namespace

std::int64_t GzipFile(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) Fail(from, std::string("cannot read: ") + std::strerror(errno));
  GzFile out(gzopen(to.c_str(), "wb"));
  if (out.get() == nullptr) Fail(to, std::string("cannot write: ") + std::strerror(errno));
  std::vector<char> buffer(kChunkBytes);
  std::int64_t total = 0;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::streamsize n = in.gcount();
    if (n == 0) break;
    if (gzwrite(out.get(), buffer.data(), static_cast<unsigned>(n)) != static_cast<int>(n)) {
      Fail(to, "cannot write: " + ZlibError(out.get()));
    }
    total += n;
  }
  if (in.bad()) Fail(from, std::string("cannot read: ") + std::strerror(errno));
  if (!out.Close()) Fail(to, std::string("cannot write: ") + std::strerror(errno));
  return total;
}

std::string GunzipFile(const std::string& path) {
  GzFile in(gzopen(path.c_str(), "rb"));
  if (in.get() == nullptr) Fail(path, std::string("cannot read: ") + std::strerror(errno));
  std::string text;
  std::vector<char> buffer(kChunkBytes);
  while (true) {
    const int n = gzread(in.get(), buffer.data(), static_cast<unsigned>(buffer.size()));
    if (n < 0) Fail(path, "not a readable gzip file: " + ZlibError(in.get()));
    // zlib reads a file that is not gzip as it is; a log that is not gzip is damaged.
    if (gzdirect(in.get()) == 1) Fail(path, "not a gzip file");
    if (n == 0) break;
    text.append(buffer.data(), static_cast<size_t>(n));
  }
  // A stream cut short ends like a whole one, but leaves an error behind.
  int code = Z_OK;
  const char* message = gzerror(in.get(), &code);
  if (code != Z_OK) Fail(path, std::string("not a readable gzip file: ") + message);
  return text;
}

}  // namespace dmlbench
