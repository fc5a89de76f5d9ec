// Test helpers for MNIST-format data: the bytes of an IDX file of unsigned
// bytes (data type 0x08, big-endian dimensions), a copy of a split's bytes
// to compare, and a fresh directory for one test under the system's
// temporary directory. Header-only.
#ifndef DMLBENCH_TESTS_TRAINER_IDX_FILES_H_
#define DMLBENCH_TESTS_TRAINER_IDX_FILES_H_

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace dmlbench::testing {

using Bytes = std::vector<std::uint8_t>;

inline Bytes Idx(std::vector<std::uint32_t> dims, const Bytes& data) {
  Bytes bytes = {0, 0, 0x08, static_cast<std::uint8_t>(dims.size())};
  for (std::uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<std::uint8_t>(d >> shift));
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

// A copy of `view` (a split's pixels or labels), for comparisons.
inline Bytes ToBytes(std::span<const std::uint8_t> view) { return Bytes(view.begin(), view.end()); }

// "<temp>/<prefix>-<pid>-<test name>", created; the test removes it.
inline std::filesystem::path TestDirectory(const std::string& prefix) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      (prefix + "-" + std::to_string(::getpid()) + "-" +
       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_TRAINER_IDX_FILES_H_
