// SqlFunctions: what the report's SQL files need and SQL lacks, added to the
// report's connection (reports/README.md lists them for authors of SQL
// files). The statistics are core/statistics.h's, over the non-NULL numbers
// of a group:
//   median(x)                         the median
//   median_ci_low(x), median_ci_high(x), median_ci_coverage(x)
//                                     its 95% interval from order statistics and
//                                     the interval's exact coverage (below 0.95
//                                     when there are too few values)
//   quantile(x, p)                    the p-quantile (0 <= p <= 1)
//   cv(x)                             standard deviation over mean
//   kendall_tau(x, y)                 Kendall's tau-b of the rows' pairs (x, y)
//                                     with both numbers; NULL when no two
//                                     pairs are untied in both
// a scalar for display:
//   round_sig(x, digits)              x to `digits` significant digits (1..17)
// and, per run, what no run can beat on its links (the physics of
// model/physics.h with the links of the latest `corrected` fit):
//   link_time_s(run_id)               per iteration: alpha times the dependent
//                                     message latencies plus the busiest link's
//                                     bytes over B; NULL when not known
//   iteration_bound_s(run_id)         a lower bound on the iteration time
//                                     that holds for any schedule: compute at
//                                     a full core (cpu_overhead_s +
//                                     cpu_per_sample_s b of the fit, measured
//                                     on one-worker calibration runs) plus the
//                                     least the busiest link must carry in one
//                                     direction and the least number of
//                                     dependent latencies: any allreduce
//                                     2 (w-1)/w W in ceil(log2 w) rounds; ps
//                                     max(W + W/k, w W/k) in 2, less what
//                                     the links' token bucket sends at once
//                                     after idling (once per direction
//                                     used in turn). The larger of
//                                     compute and exchange, not their sum, with
//                                     overlap on. NULL when not known
// Not thread-safe (the Store is not).
#ifndef DMLBENCH_ORCHESTRATOR_REPORT_SQL_FUNCTIONS_H_
#define DMLBENCH_ORCHESTRATOR_REPORT_SQL_FUNCTIONS_H_

#include "orchestrator/store/store.h"

namespace dmlbench {

void AddStatisticsFunctions(Store& store);
void AddDisplayFunctions(Store& store);
// Reads the runs and the latest corrected fit now; a database without them
// gets a link_time_s and iteration_bound_s that are always NULL.
void AddLinkTimeFunctions(Store& store);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_REPORT_SQL_FUNCTIONS_H_
