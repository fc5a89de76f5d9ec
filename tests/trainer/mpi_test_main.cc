// GoogleTest main for tests run through mpirun: every rank runs every test;
// the job fails if any rank fails. Only rank 0 prints the usual report; the
// other ranks print just their failures, each line prefixed "[rank r]", so a
// failure on any rank is both visible and fatal. MPI is initialised with the
// trainer's transport settings and at the thread level the exchange schemes
// need.
#include <mpi.h>

#include <gtest/gtest.h>

#include <cstdio>

#include "trainer/poll.h"

#ifdef DMLBENCH_SANITIZE_BUILD
// Sanitizer build: no leak report at exit. Open MPI's allocations that
// outlive MPI_Finalize sit in plug-ins it has unloaded, where LeakSanitizer
// can neither attribute nor suppress them; ranks started over ssh get no
// ASAN_OPTIONS from the test, so the default lives in the binary.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }
#endif

namespace {

class FailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n[rank %d] %s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(), rank_,
                 result.message());
  }
  void OnTestEnd(const testing::TestInfo& info) override {
    if (info.result()->Failed())
      std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", rank_, info.test_suite_name(), info.name());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  dmlbench::SetTransportDefaults();  // as the trainer does
  MPI_Init_thread(&argc, &argv, dmlbench::RequiredMpiThreadLevel(), &provided);
  testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
