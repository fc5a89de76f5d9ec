// What Slurm's query commands print, read back (no Slurm needed): lines kept
// from Slurm 22.05 on the test fixture.
#include "orchestrator/launch/slurm/slurm_queries.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

constexpr char kNodeDown[] =
    "NodeName=n2 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=3.20 AvailableFeatures=ib,avx2 "
    "ActiveFeatures=ib,avx2 Gres=(null) NodeAddr=127.0.0.1 NodeHostName=n2 Port=46785 Version=22.05.8 OS=Linux "
    "6.1.0-13-amd64 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=2048 AllocMem=0 FreeMem=19578 Sockets=4 Boards=1 "
    "State=DOWN+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=debug  "
    "Reason=disk gone [root@2026-12-05T11:37:51]\n";

TEST(SlurmQueriesTest, KeyValuesKeepSpacesInsideAValue) {
  const auto values = ReadKeyValues("NodeName=n1 OS=Linux 6.1 #1 SMP  RealMemory=1 Reason=a b [root@t]");
  EXPECT_EQ(values.at("NodeName"), "n1");
  EXPECT_EQ(values.at("OS"), "Linux 6.1 #1 SMP");
  EXPECT_EQ(values.at("RealMemory"), "1");
  EXPECT_EQ(values.at("Reason"), "a b [root@t]");
}

TEST(SlurmQueriesTest, NodeFactsAndState) {
  const std::vector<SlurmNode> nodes = ReadNodes(kNodeDown);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].facts.name, "n2");
  EXPECT_EQ(nodes[0].facts.provider, "slurm");
  EXPECT_EQ(nodes[0].facts.cores, 4);
  EXPECT_EQ(nodes[0].facts.memory_bytes, 2048LL * 1024 * 1024);
  EXPECT_EQ(nodes[0].facts.kernel, "Linux 6.1.0-13-amd64 #1 SMP PREEMPT_DYNAMIC @0");
  EXPECT_EQ(nodes[0].facts.tags_json, "{\"features\": \"ib,avx2\"}");
  EXPECT_EQ(nodes[0].state, "DOWN+DRAIN");
  EXPECT_EQ(nodes[0].reason, "disk gone [root@2026-12-05T11:37:51]");
  EXPECT_TRUE(NodeUnusable(nodes[0].state));
  EXPECT_TRUE(NodeUnusable("IDLE+DRAIN"));
  EXPECT_TRUE(NodeUnusable("IDLE*"));
  EXPECT_FALSE(NodeUnusable("IDLE"));
  EXPECT_FALSE(NodeUnusable("MIXED"));
}

TEST(SlurmQueriesTest, JobStateAndCpusPerNode) {
  const std::optional<SlurmJob> job = ReadJob(
      "JobId=1 JobName=x UserId=root(0) JobState=NODE_FAIL Reason=NodeDown Dependency=(null) ExitCode=0:0 "
      "NodeList=n[1-3] BatchHost=n1 NumNodes=3 NumCPUs=5   Nodes=n[1-2] CPU_IDs=0-1 Mem=0 GRES=   Nodes=n3 "
      "CPU_IDs=0 Mem=0 GRES= MinCPUsNode=1\n");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, "NODE_FAIL");
  EXPECT_EQ(job->reason, "NodeDown");
  EXPECT_EQ(job->exit_code, "0:0");
  EXPECT_EQ(job->node_list, "n[1-3]");
  EXPECT_EQ(job->cpus_per_nodes, (std::vector<std::pair<std::string, int>>{{"n[1-2]", 2}, {"n3", 1}}));
  EXPECT_FALSE(ReadJob("slurm_load_jobs error: Invalid job id specified\n"));
}

TEST(SlurmQueriesTest, AccountedStep) {
  const std::string sacct = "12|RUNNING|0:0\n12.3|CANCELLED by 0|0:15\n12.4|TIMEOUT|0:0\n";
  const std::optional<AccountedStep> step = ReadAccountedStep(sacct, "12.3");
  ASSERT_TRUE(step);
  EXPECT_EQ(step->state, "CANCELLED");
  EXPECT_EQ(step->exit_code, "0:15");
  EXPECT_EQ(ReadAccountedStep(sacct, "12.4")->state, "TIMEOUT");
  EXPECT_FALSE(ReadAccountedStep(sacct, "12.5"));
  EXPECT_FALSE(ReadAccountedStep("Slurm accounting storage is disabled\n", "12.3"));
}

}  // namespace
}  // namespace dmlbench
