#include <gate/metrics/stats.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <gate/metrics/math_policy.hpp>

namespace gate::metrics {

namespace {

void require_probability(double p, const char* what) {
  if (!(p > 0 && p < 1)) throw std::domain_error(std::string(what) + ": p must be in (0, 1)");
}

using StudentsT = boost::math::students_t_distribution<double, MathPolicy>;

} // namespace

double normal_quantile(double p) {
  require_probability(p, "normal_quantile");
  return boost::math::quantile(boost::math::normal_distribution<double, MathPolicy>(), p);
}

double t_cdf(double t, double df) {
  if (!(df > 0)) throw std::domain_error("t_cdf: df must be positive");
  if (std::isnan(t)) return t;
  return boost::math::cdf(StudentsT(df), t);
}

double t_quantile(double p, double df) {
  require_probability(p, "t_quantile");
  if (!(df >= 1)) throw std::domain_error("t_quantile: df must be >= 1");
  return boost::math::quantile(StudentsT(df), p);
}

} // namespace gate::metrics
