// common/sha256.h through the dmlbench_common library alone: digests of
// strings, byte spans, the streaming class, files and file lists against
// FIPS 180-2 vectors and each other, and every error path's message.
#include "common/sha256.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// This test links dmlbench_common only: its include root must expose
// common/ and nothing of the programs that link it.
#if __has_include("trainer/dataset.h") || __has_include("orchestrator/core/error.h")
#error "the include root of dmlbench_common exposes more than common/"
#endif

namespace dmlbench {
namespace {

constexpr const char* kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

// A directory of its own under the system temp dir, removed at the end.
class Sha256File : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("dmlbench-sha256-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& bytes) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  std::filesystem::path dir_;
};

TEST(Sha256, KnownVectors) {
  // FIPS 180-2 examples.
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), kAbc);
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, BytesAfterNulCount) {
  EXPECT_NE(Sha256Hex(std::string("a\0b", 3)), Sha256Hex("a"));
}

TEST(Sha256, ByteSpanDigestEqualsStringDigest) {
  const std::vector<std::uint8_t> abc = {'a', 'b', 'c'};
  EXPECT_EQ(Sha256Hex(std::span<const std::uint8_t>(abc)), kAbc);
  EXPECT_EQ(Sha256Hex(std::span<const std::uint8_t>()), Sha256Hex(""));
}

TEST(Sha256, StreamingEqualsOneShot) {
  Sha256 hash;
  hash.Update("a");
  hash.Update(std::string_view());
  const std::vector<std::uint8_t> bc = {'b', 'c'};
  hash.Update(bc);
  EXPECT_EQ(hash.HexDigest(), kAbc);
}

TEST_F(Sha256File, FileDigestEqualsStringDigest) {
  EXPECT_EQ(Sha256FileHex(Write("abc", "abc")), kAbc);
  EXPECT_EQ(Sha256FileHex(Write("empty", "")), Sha256Hex(""));
}

TEST_F(Sha256File, FileLongerThanOneChunk) {
  // 1 MiB chunks: cover an exact multiple and a remainder.
  std::string exact(1 << 21, 'x');
  std::string ragged = exact + "tail";
  EXPECT_EQ(Sha256FileHex(Write("exact", exact)), Sha256Hex(exact));
  EXPECT_EQ(Sha256FileHex(Write("ragged", ragged)), Sha256Hex(ragged));
}

TEST_F(Sha256File, FilesDigestIsTheDigestOfTheirBytesInOrder) {
  const std::string big(3 << 19, 'y');  // 1.5 chunks: a file boundary inside a chunk
  const std::string a = Write("a", big);
  const std::string b = Write("b", "second");
  EXPECT_EQ(Sha256FilesHex({a, b}), Sha256Hex(big + "second"));
  EXPECT_EQ(Sha256FilesHex({b, a}), Sha256Hex("second" + big));
  EXPECT_EQ(Sha256FilesHex({}), Sha256Hex(""));
}

// Error paths of sha256.cc follow.

TEST_F(Sha256File, MissingFileAmongSeveralIsNamed) {
  const std::string a = Write("a", "first");
  const std::string path = (dir_ / "missing").string();
  try {
    Sha256FilesHex({a, path});
    FAIL() << "no error";
  } catch (const Sha256Error& error) {
    EXPECT_EQ(std::string(error.what()), "cannot read " + path + ": No such file or directory");
  }
}

TEST_F(Sha256File, MissingFile) {
  std::string path = (dir_ / "missing").string();
  try {
    Sha256FileHex(path);
    FAIL() << "no error";
  } catch (const Sha256Error& error) {
    EXPECT_EQ(std::string(error.what()), "cannot read " + path + ": No such file or directory");
  }
}

TEST_F(Sha256File, DirectoryIsNotAFile) {
  try {
    Sha256FileHex(dir_.string());
    FAIL() << "no error";
  } catch (const Sha256Error& error) {
    EXPECT_EQ(std::string(error.what()), "cannot read " + dir_.string() + ": Is a directory");
  }
}

}  // namespace
}  // namespace dmlbench
