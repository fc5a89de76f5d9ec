// ClusterErrorOf: what a body throws as ClusterError, for tests that compare
// the whole message; "(no error)" when it throws nothing.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_CLUSTER_ERROR_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_CLUSTER_ERROR_H_

#include <functional>
#include <string>

#include "orchestrator/launch/cluster/netns.h"

namespace dmlbench {

inline std::string ClusterErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const ClusterError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace dmlbench

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_CLUSTER_ERROR_H_
