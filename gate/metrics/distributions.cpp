#include <gate/metrics/stats.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

namespace gate::metrics {

namespace {

constexpr double k_pi = std::numbers::pi;

// Stirling's series remainder, ln Γ(x) − [(x − ½)ln x − x + ½ ln 2π]; three
// terms leave an error below 1/(1680·x⁷), under 1e-17 for x >= 10.
double stirling_tail(double x) {
  double x2 = x * x;
  return (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / (1260.0 * x2)) / x2) / x;
}

// ln B(a, b). lgamma(a+b) − lgamma(a) cancels catastrophically when a is large
// and b small (the t distribution at large df has b = ½), so that case goes
// through Stirling's series, where the large terms cancel analytically.
double log_beta(double a, double b) {
  if (a < b) std::swap(a, b);
  if (a < 10 || b > 10) return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
  // ln Γ(a+b) − ln Γ(a) = (a − ½)·ln(1 + b/a) + b·ln(a+b) − b + tail(a+b) − tail(a)
  double ratio =
      (a - 0.5) * std::log1p(b / a) + b * std::log(a + b) - b + stirling_tail(a + b) - stirling_tail(a);
  return std::lgamma(b) - ratio;
}

// Continued fraction of the incomplete beta function (modified Lentz), valid
// and fast when x < (a+1)/(a+b+2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300;
  constexpr double eps = 1e-16;
  constexpr int max_iterations = 100000;
  double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= max_iterations; ++m) {
    double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < eps) return h;
  }
  return h; // not reached for the parameters gate uses; the last convergent is still close
}

// Regularized incomplete beta I_x(a, b) with y = 1 − x passed separately so
// that x close to 1 keeps its precision.
double incomplete_beta(double a, double b, double x, double y) {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  // x near 1 carries its information in y (and vice versa); at df = 1e9 the
  // exponent a·ln x would otherwise lose six digits.
  double log_x = x < 0.5 ? std::log(x) : std::log1p(-y);
  double log_y = y < 0.5 ? std::log(y) : std::log1p(-x);
  double front = std::exp(a * log_x + b * log_y - log_beta(a, b));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, y) / b;
}

// P(T > q) for q >= 0: ½·I_{df/(df+q²)}(df/2, ½).
double t_upper_tail(double q, double df) {
  double q2 = q * q;
  return 0.5 * incomplete_beta(df / 2, 0.5, df / (df + q2), q2 / (df + q2));
}

double t_density(double q, double df) {
  double log_norm = -0.5 * std::log(df) - log_beta(df / 2, 0.5);
  return std::exp(log_norm - (df + 1) / 2 * std::log1p(q * q / df));
}

void require_probability(double p, const char* what) {
  if (!(p > 0 && p < 1)) throw std::domain_error(std::string(what) + ": p must be in (0, 1)");
}

// The continued fraction loses about df·ε relative precision to cancellation
// (df = 1e8 → 2e-9), so beyond this many degrees of freedom the asymptotic
// expansions take over; their error there is O(1/df²) resp. O(1/df⁵).
constexpr double k_asymptotic_df = 4e5;

// Cornish–Fisher expansion of the t quantile about the normal one
// (Abramowitz & Stegun 26.7.5).
double t_quantile_asymptotic(double p, double df) {
  double z = normal_quantile(p);
  double z2 = z * z;
  double g1 = (z2 + 1) * z / 4;
  double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
  double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
  double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
  return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df;
}

} // namespace

double normal_quantile(double p) {
  require_probability(p, "normal_quantile");
  // Wichura 1988, AS 241 (PPND16): relative accuracy about 1e-16.
  double q = p - 0.5;
  if (std::fabs(q) <= 0.425) {
    double r = 0.180625 - q * q;
    return q *
           (((((((2509.0809287301226727 * r + 33430.575583588128105) * r + 67265.770927008700853) * r +
                45921.953931549871457) *
                   r +
               13731.693765509461125) *
                  r +
              1971.5909503065514427) *
                 r +
             133.14166789178437745) *
                r +
            3.387132872796366608) /
           (((((((5226.495278852545925 * r + 28729.085735721942674) * r + 39307.89580009271061) * r +
                21213.794301586595867) *
                   r +
               5394.1960214247511077) *
                  r +
              687.1870074920579083) *
                 r +
             42.313330701600911252) *
                r +
            1.0);
  }
  double r = q < 0 ? p : 1 - p;
  r = std::sqrt(-std::log(r));
  double value;
  if (r <= 5) {
    r -= 1.6;
    value =
        (((((((7.7454501427834140764e-4 * r + 0.0227238449892691845833) * r + 0.24178072517745061177) * r +
             1.27045825245236838258) *
                r +
            3.64784832476320460504) *
               r +
           5.7694972214606914055) *
              r +
          4.6303378461565452959) *
             r +
         1.42343711074968357734) /
        (((((((1.05075007164441684324e-9 * r + 5.475938084995344946e-4) * r + 0.0151986665636164571966) * r +
             0.14810397642748007459) *
                r +
            0.68976733498510000455) *
               r +
           1.6763848301838038494) *
              r +
          2.05319162663775882187) *
             r +
         1.0);
  } else {
    r -= 5;
    value =
        (((((((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r + 0.0012426609473880784386) *
                 r +
             0.026532189526576123093) *
                r +
            0.29656057182850489123) *
               r +
           1.7848265399172913358) *
              r +
          5.4637849111641143699) *
             r +
         6.6579046435011037772) /
        (((((((2.04426310338993978564e-15 * r + 1.4215117583164458887e-7) * r + 1.8463183175100546818e-5) *
                 r +
             7.868691311456132591e-4) *
                r +
            0.0148753612908506148525) *
               r +
           0.13692988092273580531) *
              r +
          0.59983220655588793769) *
             r +
         1.0);
  }
  return q < 0 ? -value : value;
}

double t_cdf(double t, double df) {
  if (!(df > 0)) throw std::domain_error("t_cdf: df must be positive");
  if (std::isnan(t)) return t;
  if (df > k_asymptotic_df) {
    // Abramowitz & Stegun 26.7.8, as R's pt() for large df.
    double v = 1 / (4 * df);
    double z = t * (1 - v) / std::sqrt(1 + t * t * 2 * v);
    return 0.5 * std::erfc(-z / std::numbers::sqrt2);
  }
  double upper = t_upper_tail(std::fabs(t), df);
  return t >= 0 ? 1 - upper : upper;
}

double t_quantile(double p, double df) {
  require_probability(p, "t_quantile");
  if (!(df >= 1)) throw std::domain_error("t_quantile: df must be >= 1");
  if (df > k_asymptotic_df) return t_quantile_asymptotic(p, df);
  // Work with the two-sided tail P = 2·min(p, 1−p) and a positive quantile.
  bool upper_half = p > 0.5;
  double two_sided = 2 * (upper_half ? 1 - p : p);
  double q;
  if (df == 1) {
    q = 1 / std::tan(two_sided * k_pi / 2);
  } else if (df == 2) {
    q = std::sqrt(2 / (two_sided * (2 - two_sided)) - 2);
  } else {
    // Hill 1970 (CACM algorithm 396) initial value, as in R's qt().
    double a = 1 / (df - 0.5);
    double b = 48 / (a * a);
    double c = ((20700 * a / b - 98) * a - 16) * a + 96.36;
    double d = ((94.5 / (b + c) - 3) / b + 1) * std::sqrt(a * k_pi / 2) * df;
    double y = std::pow(d * two_sided, 2.0 / df);
    if ((df < 2.1 && two_sided > 0.5) || y > 0.05 + a) {
      // Asymptotic inverse expansion about the normal.
      double x = normal_quantile(0.5 * two_sided);
      y = x * x;
      if (df < 5) c += 0.3 * (df - 4.5) * (x + 0.6);
      c = (((0.05 * d * x - 5) * x - 7) * x - 2) * x + b + c;
      y = (((((0.4 * y + 6.3) * y + 36) * y + 94.5) / c - y - 3) / b + 1) * x;
      y = std::expm1(a * y * y);
    } else {
      y = ((1 / (((df + 6) / (df * y) - 0.089 * d - 0.822) * (df + 2) * 3) + 0.5 / (df + 4)) * y - 1) *
              (df + 1) / (df + 2) +
          1 / y;
    }
    q = std::sqrt(df * y);
    // Hill 1981: second-order Taylor steps on the exact tail probability.
    for (int it = 0; it < 10; ++it) {
      double density = t_density(q, df);
      if (!(density > 0)) break;
      double step = (t_upper_tail(q, df) - two_sided / 2) / density;
      if (!std::isfinite(step)) break;
      q += step * (1 + step * q * (df + 1) / (2 * (q * q + df)));
      if (std::fabs(step) <= 1e-14 * std::fabs(q)) break;
    }
  }
  return upper_half ? q : -q;
}

} // namespace gate::metrics
