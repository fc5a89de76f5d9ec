// LeastSquares: ordinary least squares y = X b through Eigen (column-pivoted
// Householder QR), with each coefficient's standard error and 95%
// confidence interval from Student's t on n - p degrees of freedom, and the
// residuals. The only place the model stage does linear algebra. Pure;
// thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_LEAST_SQUARES_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_LEAST_SQUARES_H_

#include <functional>
#include <string>
#include <vector>

#include "orchestrator/core/error.h"

namespace dmlbench {

// A fit that cannot be made: fewer observations than coefficients, or a
// design whose columns are not independent (the data cannot tell two
// coefficients apart). what() names the coefficients concerned.
class FitError : public Error {
 public:
  using Error::Error;
};

struct Coefficient {
  std::string name;
  double value = 0;
  double standard_error = 0;  // 0 when the fit is exact (no degrees of freedom left)
  double ci_low = 0;          // 95%
  double ci_high = 0;
};

struct LeastSquaresFit {
  std::vector<Coefficient> coefficients;
  std::vector<double> residuals;  // y - X b, per observation
  double residual_rms = 0;
  int degrees_of_freedom = 0;
};

// rows[i] are the regressors of observation i (one per name), y[i] its
// value; `weights` (optional, one per row) weigh each observation's squared
// residual. Throws FitError.
LeastSquaresFit FitLeastSquares(const std::vector<std::string>& names, const std::vector<std::vector<double>>& rows,
                                const std::vector<double>& y, const std::vector<double>& weights = {});

// Nonlinear least squares: the coefficients b minimising sum_i r_i(b)^2,
// from `start`, by Levenberg-Marquardt (Eigen's, with a forward-difference
// Jacobian). `residuals` fills one residual per observation (`observations`
// of them) for given coefficients. Intervals from the Jacobian at the
// optimum (s^2 (J'J)^-1, Student's t on n - p degrees of freedom), as for a
// linear fit around it. `residuals` in the result are the r_i at b.
// Throws FitError when there are fewer observations than coefficients, the
// minimiser fails, or the Jacobian cannot tell coefficients apart.
using ResidualFunction = std::function<void(const std::vector<double>& b, std::vector<double>& r)>;
LeastSquaresFit FitNonlinearLeastSquares(const std::vector<std::string>& names, const std::vector<double>& start,
                                         std::size_t observations, const ResidualFunction& residuals);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_LEAST_SQUARES_H_
