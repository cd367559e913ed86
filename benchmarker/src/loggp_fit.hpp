#pragma once
// LogGP parameters from parametrised round-trip times PRTT(n, d, s), as Netgauge does
// (Hoefler et al., seed 003 section 2): least-squares g and G per protocol range and
// protocol-change detection by look-ahead on the fit's mean least-squares deviation.
// Pure.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "refine.hpp"

namespace tessera::bench {

/// y = intercept + slope * x fitted by least squares.
struct LinearFit {
  double intercept = 0;
  double slope = 0;
  /// Netgauge's mean least-squares deviation sqrt(sum r^2 / (m - 2)); 0 for m <= 2.
  double deviation = 0;
};

/// Least-squares line through the points (at least 1; one point gives slope 0).
LinearFit fit_line(std::span<const Point> points);

/// Indices where protocol ranges start (always begins with 0), for points sorted by x.
/// A change is declared after point `current` when the fit deviation over
/// [last_change, current + j] exceeds pfact times that over [last_change, current] for
/// every j in 1..lookahead (the paper's look-ahead rule; defaults 5 and 2). Unlike
/// Netgauge, the deviation is taken over relative residuals (r_i / y_i), so noise that
/// grows with the value along a geometric sweep does not pass for a protocol change.
std::vector<std::size_t> protocol_ranges(std::span<const Point> points, int lookahead = 5,
                                         double pfact = 2.0);

/// Medians measured at one message size s (bytes), all in microseconds.
struct PrttPoint {
  std::int64_t bytes = 0;
  double prtt_1_0 = 0;  ///< PRTT(1, 0, s)
  double prtt_n_0 = 0;  ///< PRTT(n, 0, s)
  double prtt_n_d = 0;  ///< PRTT(n, d, s)
  double d = 0;         ///< the delay used: PRTT(1, 0, s), or PRTT(2, 0, s) if that was <= G_all
  double o_r = 0;       ///< receive overhead measured directly at this size
};

/// LogGP parameters of one protocol range [from_bytes, to_bytes].
struct LoggpFit {
  std::int64_t from_bytes = 0;
  std::int64_t to_bytes = 0;
  double L = 0;        ///< us: PRTT(1, 0, smallest size) / 2 (Netgauge's choice)
  double o_s = 0;      ///< us: median over the range of (PRTT(n,d,s) - PRTT(1,0,s))/(n-1) - d
  double o_r = 0;      ///< us: median over the range of the measured o_r
  double g = 0;        ///< us: the fit of G_all(s) evaluated at s = 1
  double G = 0;        ///< us per byte: the fit's slope
  double deviation = 0;
};

/// G_all(s) = (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1).
double gap_all(const PrttPoint& p, int n);

/// Fit every protocol range of the points (sorted by size, n >= 2). Warnings (one line
/// each, e.g. "G_all > d at 65536 bytes") are appended to `warnings` if non-null.
std::vector<LoggpFit> fit_loggp(std::span<const PrttPoint> points, int n, int lookahead,
                                double pfact, std::vector<std::string>* warnings = nullptr);

}  // namespace tessera::bench
