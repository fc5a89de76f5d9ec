// GoogleTest main for tests run through mpirun: every rank runs every test;
// the job fails if any rank fails. MPI is initialised at the thread level the
// exchange schemes need.
#include <mpi.h>

#include <gtest/gtest.h>

#include "trainer/poll.h"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, dmlbench::RequiredMpiThreadLevel(), &provided);
  testing::InitGoogleTest(&argc, argv);
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
