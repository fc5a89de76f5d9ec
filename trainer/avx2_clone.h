// DMLBENCH_AVX2_CLONE: compiles the function it precedes twice, for AVX2 and
// for the x86-64 baseline (SSE2), and calls the one the CPU supports (GCC
// function multi-versioning), so the binary still runs on any x86-64 host.
// For loops the compiler vectorises: 8 floats per instruction instead of 4.
// FMA is not enabled, so both versions compute the same floats. Elsewhere a
// no-op.
#ifndef DMLBENCH_TRAINER_AVX2_CLONE_H_
#define DMLBENCH_TRAINER_AVX2_CLONE_H_

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DMLBENCH_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#else
#define DMLBENCH_AVX2_CLONE
#endif

#endif  // DMLBENCH_TRAINER_AVX2_CLONE_H_
