#include "orchestrator/model/least_squares.h"

#include <Eigen/Dense>
#include <unsupported/Eigen/NonLinearOptimization>
#include <unsupported/Eigen/NumericalDiff>

#include <cmath>

#include "orchestrator/core/statistics.h"

namespace dmlbench {
namespace {

// Columns on very different scales (seconds per byte beside seconds; a
// coefficient only its prior holds beside an exponent): the pivoted QR's
// rank decision is made on the columns scaled to unit norm, not on their
// raw sizes. Throws FitError naming a zero column (`zero` says what that
// means) or the coefficients the others leave undecided (`fit` names the fit).
struct ScaledQr {
  Eigen::VectorXd scale;  // each column's norm
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr;
  // The diagonal of (X'X)^-1 in the columns' own units, through R of the
  // scaled QR: (X'X)^-1 = S^-1 P R^-1 R^-T P' S^-1.
  Eigen::VectorXd InverseGramDiagonal() const {
    const Eigen::Index p = scale.size();
    const Eigen::MatrixXd r = qr.matrixR().topLeftCorner(p, p).triangularView<Eigen::Upper>();
    const Eigen::MatrixXd r_inverse = r.triangularView<Eigen::Upper>().solve(Eigen::MatrixXd::Identity(p, p));
    const Eigen::MatrixXd unpermuted =
        qr.colsPermutation() * (r_inverse * r_inverse.transpose()) * qr.colsPermutation().transpose();
    return unpermuted.diagonal().cwiseQuotient(scale.cwiseProduct(scale));
  }
};
ScaledQr ScaledDecomposition(const Eigen::MatrixXd& columns, const std::vector<std::string>& names,
                             const std::string& zero, const std::string& fit) {
  const Eigen::Index p = columns.cols();
  ScaledQr out;
  out.scale.resize(p);
  for (Eigen::Index j = 0; j < p; ++j) {
    out.scale(j) = columns.col(j).norm();
    if (out.scale(j) == 0) throw FitError("coefficient " + names[static_cast<std::size_t>(j)] + " " + zero);
  }
  out.qr.setThreshold(1e-10);
  out.qr.compute(columns * out.scale.cwiseInverse().asDiagonal());
  if (out.qr.rank() < p) {
    std::string which;
    const auto& permutation = out.qr.colsPermutation().indices();
    for (Eigen::Index j = out.qr.rank(); j < p; ++j) {
      which += (which.empty() ? "" : ", ") + names[static_cast<std::size_t>(permutation(j))];
    }
    throw FitError("the calibration data cannot tell these coefficients" + fit + " from the others: " + which);
  }
  return out;
}

}  // namespace

LeastSquaresFit FitLeastSquares(const std::vector<std::string>& names, const std::vector<std::vector<double>>& rows,
                                const std::vector<double>& y, const std::vector<double>& weights) {
  const Eigen::Index n = static_cast<Eigen::Index>(rows.size());
  const Eigen::Index p = static_cast<Eigen::Index>(names.size());
  if (n < p) {
    throw FitError("cannot fit " + std::to_string(p) + " coefficients to " + std::to_string(n) + " observations");
  }
  Eigen::MatrixXd x(n, p);
  Eigen::VectorXd target(n);
  Eigen::VectorXd root_weight = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!weights.empty()) root_weight(i) = std::sqrt(weights[static_cast<std::size_t>(i)]);
    for (Eigen::Index j = 0; j < p; ++j) x(i, j) = rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
    target(i) = y[static_cast<std::size_t>(i)];
  }
  const Eigen::MatrixXd weighted_x = root_weight.asDiagonal() * x;
  const Eigen::VectorXd weighted_y = root_weight.asDiagonal() * target;
  const ScaledQr decomposition = ScaledDecomposition(weighted_x, names, "has no data: its column is zero", "");
  const Eigen::VectorXd& scale = decomposition.scale;
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd>& qr = decomposition.qr;
  const Eigen::VectorXd scaled_b = qr.solve(weighted_y);
  const Eigen::VectorXd b = scale.cwiseInverse().asDiagonal() * scaled_b;

  LeastSquaresFit fit;
  const Eigen::VectorXd residual = target - x * b;
  const Eigen::VectorXd weighted_residual = weighted_y - weighted_x * b;
  fit.degrees_of_freedom = static_cast<int>(n - p);
  fit.residuals.assign(residual.data(), residual.data() + n);
  fit.residual_rms = std::sqrt(residual.squaredNorm() / static_cast<double>(n));
  // Var(b) = s^2 (X'WX)^-1.
  Eigen::VectorXd standard_error = Eigen::VectorXd::Zero(p);
  if (fit.degrees_of_freedom > 0) {
    const double s2 = weighted_residual.squaredNorm() / fit.degrees_of_freedom;
    standard_error = (s2 * decomposition.InverseGramDiagonal()).cwiseSqrt();
  }
  const double t = fit.degrees_of_freedom > 0 ? StudentTQuantile(0.975, fit.degrees_of_freedom) : 0;
  for (Eigen::Index j = 0; j < p; ++j) {
    Coefficient c;
    c.name = names[static_cast<std::size_t>(j)];
    c.value = b(j);
    c.standard_error = standard_error(j);
    c.ci_low = b(j) - t * standard_error(j);
    c.ci_high = b(j) + t * standard_error(j);
    fit.coefficients.push_back(c);
  }
  return fit;
}

namespace {

// Eigen's functor shape for LevenbergMarquardt and NumericalDiff.
struct ResidualFunctor {
  using Scalar = double;
  enum { InputsAtCompileTime = Eigen::Dynamic, ValuesAtCompileTime = Eigen::Dynamic };
  using InputType = Eigen::VectorXd;
  using ValueType = Eigen::VectorXd;
  using JacobianType = Eigen::MatrixXd;

  const ResidualFunction* function = nullptr;
  int input_count = 0, value_count = 0;
  int inputs() const { return input_count; }
  int values() const { return value_count; }
  int operator()(const Eigen::VectorXd& b, Eigen::VectorXd& r) const {
    std::vector<double> coefficients(b.data(), b.data() + b.size()), out(static_cast<std::size_t>(value_count));
    (*function)(coefficients, out);
    for (int i = 0; i < value_count; ++i) r(i) = out[static_cast<std::size_t>(i)];
    return 0;
  }
};

}  // namespace

LeastSquaresFit FitNonlinearLeastSquares(const std::vector<std::string>& names, const std::vector<double>& start,
                                         std::size_t observations, const ResidualFunction& residuals) {
  const int p = static_cast<int>(names.size()), n = static_cast<int>(observations);
  if (n < p) {
    throw FitError("cannot fit " + std::to_string(p) + " coefficients to " + std::to_string(n) + " observations");
  }
  ResidualFunctor functor;
  functor.function = &residuals;
  functor.input_count = p;
  functor.value_count = n;
  Eigen::NumericalDiff<ResidualFunctor> numeric(functor);
  Eigen::LevenbergMarquardt<Eigen::NumericalDiff<ResidualFunctor>> minimiser(numeric);
  minimiser.parameters.maxfev = 4000;
  Eigen::VectorXd b = Eigen::Map<const Eigen::VectorXd>(start.data(), p);
  const Eigen::LevenbergMarquardtSpace::Status status = minimiser.minimize(b);
  if (status == Eigen::LevenbergMarquardtSpace::ImproperInputParameters) {
    throw FitError("the nonlinear fit of " + std::to_string(p) + " coefficients could not start");
  }
  Eigen::VectorXd r(n);
  functor(b, r);
  Eigen::MatrixXd jacobian(n, p);
  numeric.df(b, jacobian);
  LeastSquaresFit fit;
  fit.degrees_of_freedom = n - p;
  fit.residuals.assign(r.data(), r.data() + n);
  fit.residual_rms = std::sqrt(r.squaredNorm() / n);
  // As in the linear fit, the rank is decided on the Jacobian's columns
  // scaled to unit norm: a coefficient that barely moves the residuals (a
  // wire factor where every run is CPU-bound, held only by its prior) sits
  // beside one that moves them a lot, and unscaled that difference of
  // scale alone read as a lost rank. Its interval comes out wide instead.
  // Var(b) = s^2 (J'J)^-1.
  const Eigen::VectorXd variance =
      ScaledDecomposition(jacobian, names, "does not move the residuals at all", " of the nonlinear fit")
          .InverseGramDiagonal();
  const double s2 = fit.degrees_of_freedom > 0 ? r.squaredNorm() / fit.degrees_of_freedom : 0;
  const double t = fit.degrees_of_freedom > 0 ? StudentTQuantile(0.975, fit.degrees_of_freedom) : 0;
  for (int j = 0; j < p; ++j) {
    Coefficient c;
    c.name = names[static_cast<std::size_t>(j)];
    c.value = b(j);
    c.standard_error = std::sqrt(std::max(0.0, s2 * variance(j)));
    c.ci_low = c.value - t * c.standard_error;
    c.ci_high = c.value + t * c.standard_error;
    fit.coefficients.push_back(c);
  }
  return fit;
}

}  // namespace dmlbench
