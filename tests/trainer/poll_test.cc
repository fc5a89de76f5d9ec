// The Open MPI settings the trainer puts into its environment before MPI_Init.
#include <stdlib.h>

#include <string>

#include <gtest/gtest.h>

#include "trainer/poll.h"

namespace dmlbench {
namespace {

constexpr const char* kNames[] = {"OMPI_MCA_btl_tcp_eager_limit", "OMPI_MCA_btl_tcp_rndv_eager_limit",
                                  "OMPI_MCA_btl_tcp_max_send_size"};

std::string Env(const char* name) {
  const char* value = getenv(name);
  return value ? value : "<unset>";
}

TEST(SetTransportDefaults, MakesTcpMessagesUpToOneMebibyteEager) {
  for (const char* name : kNames) unsetenv(name);
  SetTransportDefaults();
  for (const char* name : kNames) EXPECT_EQ(Env(name), "1048576") << name;
}

TEST(SetTransportDefaults, KeepsWhatTheUserSet) {
  for (const char* name : kNames) unsetenv(name);
  setenv("OMPI_MCA_btl_tcp_eager_limit", "4096", 1);
  SetTransportDefaults();
  EXPECT_EQ(Env("OMPI_MCA_btl_tcp_eager_limit"), "4096");
  EXPECT_EQ(Env("OMPI_MCA_btl_tcp_max_send_size"), "1048576");
}

}  // namespace
}  // namespace dmlbench
