#include "trainer/idx_reader.h"

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace dmlbench {
namespace {

constexpr std::uint8_t kTypeUnsignedByte = 0x08;
// Refuse headers that declare more than this (Fashion-MNIST's largest file
// holds 47 MB); real data never comes close and a corrupt header must not
// make us try.
constexpr std::uint64_t kMaxDataBytes = std::uint64_t{1} << 31;
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
// deflate cannot expand its input more than about 1032-fold: a bound on the
// content of a gzip file that holds for every input, corrupt or not.
constexpr std::uint64_t kMaxDeflateRatio = 1032;

// Asks the kernel to back the whole pages of [data, data + bytes) with
// transparent huge pages as they are first touched. A hint: without THP (or
// with none free) the pages are ordinary ones.
void AdviseHugePages(const void* data, std::size_t bytes) {
  const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) / page * page;
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// Produces the IDX content of a file: either its bytes as they are, or the
// output of a gzip stream. Read() returns fewer than n bytes only at the end.
class ByteSource {
 public:
  ByteSource(std::span<const std::uint8_t> bytes, const std::string& name)
      : bytes_(bytes), name_(name),
        gzip_(bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) {
    if (gzip_) {
      stream_.next_in = const_cast<Bytef*>(bytes.data());
      stream_.avail_in = static_cast<uInt>(bytes.size());
      // 16 + MAX_WBITS: expect a gzip header and check the CRC at the end.
      if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK)
        throw IdxError(name_ + ": cannot initialise zlib");
    }
  }
  ~ByteSource() {
    if (gzip_) inflateEnd(&stream_);
  }
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  bool gzip() const { return gzip_; }

  std::size_t Read(std::uint8_t* out, std::size_t n) {
    if (!gzip_) {
      std::size_t count = std::min(n, bytes_.size() - position_);
      if (count > 0) std::memcpy(out, bytes_.data() + position_, count);
      position_ += count;
      return count;
    }
    std::size_t produced = 0;
    while (produced < n && !stream_end_) {
      stream_.next_out = out + produced;
      stream_.avail_out = static_cast<uInt>(std::min<std::size_t>(n - produced, kChunkBytes));
      uInt before = stream_.avail_out;
      int status = inflate(&stream_, Z_NO_FLUSH);
      produced += before - stream_.avail_out;
      if (status == Z_STREAM_END) {
        stream_end_ = true;
        if (stream_.avail_in != 0)
          throw CompressedError("unexpected data after the end of the gzip stream");
      } else if (status == Z_BUF_ERROR || (status == Z_OK && stream_.avail_in == 0 &&
                                           stream_.avail_out != 0)) {
        throw CompressedError("gzip stream is truncated");
      } else if (status != Z_OK) {
        throw CompressedError(std::string("corrupt gzip stream (") +
                              (stream_.msg ? stream_.msg : zError(status)) + ")");
      }
    }
    return produced;
  }

 private:
  IdxError CompressedError(const std::string& problem) const {
    return IdxError(name_ + ": compressed byte " + std::to_string(stream_.total_in) + ": " +
                    problem);
  }

  std::span<const std::uint8_t> bytes_;
  const std::string& name_;
  bool gzip_;
  std::size_t position_ = 0;
  z_stream stream_{};
  bool stream_end_ = false;
};

std::string DimsText(const std::vector<std::uint32_t>& dims) {
  std::string text;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) text += "x";
    text += std::to_string(dims[i]);
  }
  return text;
}

std::string Hex(std::uint8_t byte) {
  static const char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[byte >> 4] + kDigits[byte & 15];
}

}  // namespace

std::string IdxPosition(const std::string& name, std::uint64_t offset, bool gzip) {
  return name + ": byte " + std::to_string(offset) + (gzip ? " (decompressed)" : "");
}

IdxArray ParseIdx(std::span<const std::uint8_t> bytes, const std::string& name) {
  ByteSource source(bytes, name);
  auto error = [&](std::uint64_t offset, const std::string& problem) {
    return IdxError(IdxPosition(name, offset, source.gzip()) + ": " + problem);
  };

  std::uint8_t magic[4];
  std::size_t got = source.Read(magic, 4);
  if (got < 4)
    throw error(got, "file ends inside the 4-byte magic number");
  if (magic[0] != 0 || magic[1] != 0)
    throw error(0, "not an IDX file: magic number starts with " + Hex(magic[0]) + " " +
                       Hex(magic[1]) + ", expected 0x00 0x00");
  if (magic[2] != kTypeUnsignedByte)
    throw error(2, "unsupported IDX data type " + Hex(magic[2]) +
                       " (only 0x08, unsigned byte, is supported)");
  if (magic[3] == 0) throw error(3, "IDX header declares 0 dimensions");

  IdxArray array;
  array.gzip = source.gzip();
  array.dims.resize(magic[3]);
  std::uint64_t data_bytes = 1;
  for (std::size_t i = 0; i < array.dims.size(); ++i) {
    std::uint64_t offset = 4 + 4 * i;
    std::uint8_t be[4];
    got = source.Read(be, 4);
    if (got < 4)
      throw error(offset + got, "file ends inside the size of dimension " + std::to_string(i) +
                                    " of " + std::to_string(array.dims.size()));
    array.dims[i] = (std::uint32_t{be[0]} << 24) | (std::uint32_t{be[1]} << 16) |
                    (std::uint32_t{be[2]} << 8) | std::uint32_t{be[3]};
    data_bytes *= array.dims[i];
    if (data_bytes > kMaxDataBytes)
      throw error(offset, "dimensions " + DimsText({array.dims.begin(), array.dims.begin() + i + 1}) +
                              " declare more than " + std::to_string(kMaxDataBytes) + " bytes");
  }

  // Reserve once (reallocation would double the peak memory), but never more
  // than the input can hold, so that a corrupt header costs nothing.
  const std::uint64_t header_bytes = 4 + 4 * array.dims.size();
  array.data.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(
      data_bytes, bytes.size() * (source.gzip() ? kMaxDeflateRatio : 1))));
  // Training reads the images at random, a batch's rows from all over the
  // array (Fashion-MNIST's: 47 MB). In 4 KB pages every row missed the TLB
  // and the next batch's prefetch (dataset.h) hid little: gathering a batch
  // of 100 took 33 us, 15 us in 2 MB pages.
  AdviseHugePages(array.data.data(), array.data.capacity());
  while (array.data.size() < data_bytes) {
    std::size_t want = static_cast<std::size_t>(
        std::min<std::uint64_t>(kChunkBytes, data_bytes - array.data.size()));
    std::size_t old_size = array.data.size();
    array.data.resize(old_size + want);
    got = source.Read(array.data.data() + old_size, want);
    if (got < want)
      throw error(header_bytes + old_size + got,
                  "file ends after " + std::to_string(old_size + got) + " of " +
                      std::to_string(data_bytes) + " data bytes (dimensions " +
                      DimsText(array.dims) + ")");
  }
  // A gzip source throws here if its stream is truncated or followed by junk.
  std::uint8_t extra;
  if (source.Read(&extra, 1) != 0)
    throw error(header_bytes + data_bytes,
                "unexpected data after the " + std::to_string(data_bytes) +
                    " data bytes the dimensions " + DimsText(array.dims) + " declare");
  return array;
}

IdxArray ReadIdxFile(const std::string& path, std::vector<std::uint8_t>* bytes_read) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw IdxError(path + ": cannot open: " + std::strerror(errno));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(std::max<std::streamoff>(0, in.tellg())));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size())))
    throw IdxError(path + ": read error: " + std::strerror(errno));
  IdxArray array = ParseIdx(bytes, path);
  if (bytes_read) *bytes_read = std::move(bytes);
  return array;
}

}  // namespace dmlbench
