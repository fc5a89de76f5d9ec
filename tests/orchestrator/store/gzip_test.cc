// Tests of orchestrator/store/gzip: whole files through zlib and back, and
// every error path with its message.
#include "orchestrator/store/gzip.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

using testing::TempDir;

TEST(GzipTest, RoundTripsAnyBytes) {
  TempDir dir;
  std::string bytes(300 * 1024 + 5, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 % 256);
  for (const std::string& text : {bytes, std::string(), std::string("last line without a newline")}) {
    testing::WriteFile(dir / "plain", text);
    EXPECT_EQ(GzipFile(dir / "plain", dir / "plain.gz"), static_cast<std::int64_t>(text.size()));
    EXPECT_EQ(GunzipFile(dir / "plain.gz"), text);
  }
}

TEST(GzipTest, WritesTheGzipFormatOtherToolsRead) {
  TempDir dir;
  testing::WriteFile(dir / "plain", "rank 0 says hello\n");
  GzipFile(dir / "plain", dir / "plain.gz");
  const std::string stored = testing::ReadFile(dir / "plain.gz");
  ASSERT_GE(stored.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(stored[0]), 0x1f);  // the gzip magic number
  EXPECT_EQ(static_cast<unsigned char>(stored[1]), 0x8b);
  // zlib's own one-shot reader agrees.
  gzFile file = gzopen((dir / "plain.gz").c_str(), "rb");
  char buffer[64] = {};
  const int n = gzread(file, buffer, sizeof buffer);
  gzclose(file);
  EXPECT_EQ(std::string(buffer, n), "rank 0 says hello\n");
}

// ---- error paths of gzip.cc follow ----------------------------------------

TEST(GzipTest, MissingSourceIsNamed) {
  TempDir dir;
  try {
    GzipFile(dir / "absent", dir / "out.gz");
    FAIL() << "compressed a missing file";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), dir / "absent: cannot read: No such file or directory");
  }
}

TEST(GzipTest, UnwritableTargetIsNamed) {
  TempDir dir;
  testing::WriteFile(dir / "plain", "x");
  try {
    GzipFile(dir / "plain", dir / "no/such/dir/out.gz");
    FAIL() << "wrote into a missing directory";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), dir / "no/such/dir/out.gz: cannot write: No such file or directory");
  }
}

TEST(GzipTest, MissingGzipFileIsNamed) {
  TempDir dir;
  try {
    GunzipFile(dir / "absent.gz");
    FAIL() << "read a missing file";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), dir / "absent.gz: cannot read: No such file or directory");
  }
}

TEST(GzipTest, PlainFileIsNotTakenForGzip) {
  TempDir dir;
  testing::WriteFile(dir / "plain.gz", "not compressed\n");
  try {
    GunzipFile(dir / "plain.gz");
    FAIL() << "read a plain file as gzip";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), dir / "plain.gz: not a gzip file");
  }
}

TEST(GzipTest, TruncatedGzipFileIsAnError) {
  TempDir dir;
  std::string bytes(50000, 'x');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 % 251);
  testing::WriteFile(dir / "plain", bytes);
  GzipFile(dir / "plain", dir / "plain.gz");
  const std::string stored = testing::ReadFile(dir / "plain.gz");
  testing::WriteFile(dir / "cut.gz", stored.substr(0, stored.size() / 2));
  try {
    GunzipFile(dir / "cut.gz");
    FAIL() << "read a truncated gzip file";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(dir / "cut.gz: not a readable gzip file: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace dmlbench
