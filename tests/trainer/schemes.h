// Test helpers for the trainer's MPI tests that run every exchange scheme:
// one row per configuration of a scheme, the trainer options it sets, and
// its name as a GoogleTest parameter ("ring", "ps2_overlap", ...).
#ifndef DMLBENCH_TESTS_TRAINER_SCHEMES_H_
#define DMLBENCH_TESTS_TRAINER_SCHEMES_H_

#include <cstddef>
#include <string>

#include <gtest/gtest.h>

#include "trainer/trainer.h"

namespace dmlbench::testing {

struct Scheme {
  const char* architecture;
  int servers;  // ps: server ranks, taken from the world
  bool overlap;
  std::size_t bucket_bytes = 1024;  // with overlap; 1 KiB: every layer its own bucket
  std::size_t partition_bytes = 0;  // exchanges cut into parts of this size; 0 = whole
  bool pulls_in_turn = false;       // ps, 1 server, whole: the server's pulls one worker at a time
};

// The scheme's options, without evaluation; the test sets batch, epochs and
// the rest.
inline TrainerOptions SchemeOptions(const Scheme& scheme) {
  TrainerOptions options;
  options.architecture = scheme.architecture;
  options.servers = scheme.servers;
  options.overlap = scheme.overlap;
  options.evaluate = false;
  options.bucket_bytes = scheme.bucket_bytes;
  options.partition_bytes = scheme.partition_bytes;
  options.pulls_in_turn = scheme.pulls_in_turn;
  return options;
}

inline std::string SchemeName(const ::testing::TestParamInfo<Scheme>& row) {
  return std::string(row.param.architecture) + (row.param.servers ? std::to_string(row.param.servers) : "") +
         (row.param.overlap ? "_overlap" + std::to_string(row.param.bucket_bytes) : "") +
         (row.param.partition_bytes ? "_partition" + std::to_string(row.param.partition_bytes) : "") +
         (row.param.pulls_in_turn ? "_pulls_in_turn" : "");
}

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_TRAINER_SCHEMES_H_
