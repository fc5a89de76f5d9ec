// IDX reader: loads one MNIST-format IDX file (raw, or gzip-compressed as
// distributed) into memory and validates magic number, dimensions and length.
// Owns nothing beyond the returned array; knows nothing of images or labels
// (dataset.h gives the files their meaning). Stateless and thread-safe.
#ifndef DMLBENCH_TRAINER_IDX_READER_H_
#define DMLBENCH_TRAINER_IDX_READER_H_

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace dmlbench {

// The one exception type of this module. what() is a single line:
//   "<file>: byte <offset>: <problem>"                 raw IDX file
//   "<file>: byte <offset> (decompressed): <problem>"  IDX content of a .gz
//   "<file>: compressed byte <offset>: <problem>"      broken gzip stream
//   "<file>: <problem>"                                unreadable file
class IdxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An IDX array of unsigned bytes (data type 0x08, the only type MNIST and
// Fashion-MNIST use): dims[0] is the slowest-varying dimension.
struct IdxArray {
  std::vector<std::uint32_t> dims;
  std::vector<std::uint8_t> data;   // product(dims) bytes, row-major
  bool gzip = false;                // the file was gzip-compressed
};

// "<name>: byte <offset>" (+ " (decompressed)" when gzip): the prefix of an
// IdxError message, for callers that validate an array's content further.
std::string IdxPosition(const std::string& name, std::uint64_t offset, bool gzip);

// Parses `bytes`, the whole content of the file called `name` (used only in
// messages). gzip input (magic 1f 8b) is decompressed first; the decompressed
// size is bounded by what the header declares, so a corrupt header cannot
// make it allocate more than the file claims. Throws IdxError.
IdxArray ParseIdx(std::span<const std::uint8_t> bytes, const std::string& name);

// Reads the file at `path` and parses it; `bytes_read`, if not null,
// receives the file's bytes as read (for the dataset checksum). Throws IdxError.
IdxArray ReadIdxFile(const std::string& path, std::vector<std::uint8_t>* bytes_read = nullptr);

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_IDX_READER_H_
