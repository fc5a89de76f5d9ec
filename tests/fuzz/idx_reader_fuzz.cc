// Fuzz target for the IDX reader: any byte string either parses into an array
// whose size matches its dimensions or throws IdxError; nothing else (no
// crash, no other exception, no over-read, no unbounded allocation).
#include <cstdint>
#include <cstdlib>
#include <span>

#include "trainer/idx_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    dmlbench::IdxArray array = dmlbench::ParseIdx(std::span<const uint8_t>(data, size), "input");
    std::uint64_t expected = 1;
    for (std::uint32_t d : array.dims) expected *= d;
    if (array.data.size() != expected || array.dims.empty()) std::abort();
  } catch (const dmlbench::IdxError&) {
  }
  return 0;
}
