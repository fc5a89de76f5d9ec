#include "trainer/idx_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/trainer/idx_files.h"

namespace dmlbench {
namespace {

using testing::Bytes;
using testing::Idx;


Bytes Gzip(const Bytes& raw) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes out(deflateBound(&stream, raw.size()) + 32);
  stream.next_in = const_cast<Bytef*>(raw.data());
  stream.avail_in = static_cast<uInt>(raw.size());
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

std::string ErrorOf(const Bytes& bytes, const std::string& name = "f") {
  try {
    ParseIdx(bytes, name);
  } catch (const IdxError& error) {
    return error.what();
  }
  return "no error";
}

TEST(IdxReader, ParsesRawArray) {
  IdxArray array = ParseIdx(Idx({2, 3}, {1, 2, 3, 4, 5, 6}), "f");
  EXPECT_EQ(array.dims, (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(array.data, (Bytes{1, 2, 3, 4, 5, 6}));
  EXPECT_FALSE(array.gzip);
}

TEST(IdxReader, ParsesGzipArray) {
  Bytes data(3000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7);
  IdxArray array = ParseIdx(Gzip(Idx({3, 1000}, data)), "f.gz");
  EXPECT_EQ(array.dims, (std::vector<std::uint32_t>{3, 1000}));
  EXPECT_EQ(array.data, data);
  EXPECT_TRUE(array.gzip);
}

TEST(IdxReader, ParsesEmptyArray) {
  IdxArray array = ParseIdx(Idx({0, 28, 28}, {}), "f");
  EXPECT_EQ(array.dims, (std::vector<std::uint32_t>{0, 28, 28}));
  EXPECT_TRUE(array.data.empty());
}

TEST(IdxReader, ReadsFashionMnistTestLabels) {
  const std::string path = std::string(DMLBENCH_DATASET_DIR) + "/t10k-labels-idx1-ubyte.gz";
  std::vector<std::uint8_t> raw;
  IdxArray labels = ReadIdxFile(path, &raw);
  EXPECT_EQ(labels.dims, (std::vector<std::uint32_t>{10000}));
  EXPECT_EQ(labels.data[0], 9);  // ankle boot, the first test image
  EXPECT_EQ(raw.size(), std::filesystem::file_size(path));
}

// Error paths of idx_reader.cc follow, one per check, messages compared whole.

TEST(IdxReaderErrors, MissingFile) {
  try {
    ReadIdxFile("no/such/file.gz");
    FAIL() << "no error";
  } catch (const IdxError& error) {
    EXPECT_STREQ(error.what(), "no/such/file.gz: cannot open: No such file or directory");
  }
}

TEST(IdxReaderErrors, EmptyFile) {
  EXPECT_EQ(ErrorOf({}), "f: byte 0: file ends inside the 4-byte magic number");
}

TEST(IdxReaderErrors, ShortMagic) {
  EXPECT_EQ(ErrorOf({0, 0, 8}), "f: byte 3: file ends inside the 4-byte magic number");
}

TEST(IdxReaderErrors, BadMagic) {
  EXPECT_EQ(ErrorOf({0x12, 0x34, 8, 1}),
            "f: byte 0: not an IDX file: magic number starts with 0x12 0x34, expected 0x00 0x00");
}

TEST(IdxReaderErrors, UnsupportedType) {
  EXPECT_EQ(ErrorOf({0, 0, 0x0d, 1}),
            "f: byte 2: unsupported IDX data type 0x0d (only 0x08, unsigned byte, is supported)");
}

TEST(IdxReaderErrors, NoDimensions) {
  EXPECT_EQ(ErrorOf({0, 0, 8, 0}), "f: byte 3: IDX header declares 0 dimensions");
}

TEST(IdxReaderErrors, TruncatedDimensions) {
  EXPECT_EQ(ErrorOf({0, 0, 8, 3, 0, 0, 0, 2, 0, 0}),
            "f: byte 10: file ends inside the size of dimension 1 of 3");
}

TEST(IdxReaderErrors, HugeDimensions) {
  EXPECT_EQ(ErrorOf(Idx({65536, 65536}, {})),
            "f: byte 8: dimensions 65536x65536 declare more than 2147483648 bytes");
}

TEST(IdxReaderErrors, TruncatedData) {
  EXPECT_EQ(ErrorOf(Idx({2, 5}, {1, 2, 3, 4})),
            "f: byte 16: file ends after 4 of 10 data bytes (dimensions 2x5)");
}

TEST(IdxReaderErrors, TrailingData) {
  EXPECT_EQ(ErrorOf(Idx({2}, {1, 2, 3})),
            "f: byte 10: unexpected data after the 2 data bytes the dimensions 2 declare");
}

TEST(IdxReaderErrors, GzipContentErrorSaysDecompressed) {
  EXPECT_EQ(ErrorOf(Gzip(Idx({2, 5}, {1, 2, 3, 4})), "f.gz"),
            "f.gz: byte 16 (decompressed): file ends after 4 of 10 data bytes (dimensions 2x5)");
}

TEST(IdxReaderErrors, TruncatedGzip) {
  Bytes gz = Gzip(Idx({100}, Bytes(100, 7)));
  gz.resize(gz.size() - 6);  // cut into the CRC/length trailer
  EXPECT_EQ(ErrorOf(gz, "f.gz"),
            "f.gz: compressed byte " + std::to_string(gz.size()) + ": gzip stream is truncated");
}

TEST(IdxReaderErrors, GzipChecksumMismatch) {
  Bytes gz = Gzip(Idx({100}, Bytes(100, 7)));
  gz[gz.size() - 8] ^= 0xff;  // first byte of the CRC-32
  EXPECT_EQ(ErrorOf(gz, "f.gz"),
            "f.gz: compressed byte " + std::to_string(gz.size() - 4) +
                ": corrupt gzip stream (incorrect data check)");
}

TEST(IdxReaderErrors, GarbageAfterGzipStream) {
  Bytes gz = Gzip(Idx({100}, Bytes(100, 7)));
  const std::size_t end = gz.size();
  gz.push_back(0);
  EXPECT_EQ(ErrorOf(gz, "f.gz"), "f.gz: compressed byte " + std::to_string(end) +
                                     ": unexpected data after the end of the gzip stream");
}

TEST(IdxReaderErrors, CorruptDeflateBlock) {
  Bytes gz = Gzip(Idx({100}, Bytes(100, 7)));
  gz[10] = 0xff;  // first byte after the 10-byte gzip header: block type 3 is invalid
  EXPECT_EQ(ErrorOf(gz, "f.gz"), "f.gz: compressed byte 11: corrupt gzip stream (invalid block type)");
}

}  // namespace
}  // namespace dmlbench
