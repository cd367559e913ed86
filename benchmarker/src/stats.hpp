#pragma once
// The benchmarker's summary of a cell's timing samples: median and quartiles (from
// tessera/statistics.hpp, shared with validate and gauss --bench) and the relative standard
// error of the median that decides when a cell has enough samples. Pure.
#include <cstddef>
#include <span>

namespace tessera::bench {

/// Median and quartiles of a sample set, plus how well the median is known.
struct Summary {
  double median = 0;
  double q1 = 0;           ///< first quartile
  double q3 = 0;           ///< third quartile
  std::size_t count = 0;   ///< samples summarised
  double rse = 0;          ///< relative standard error of the median (inf if unknown)
};

/// Standard error of the median from the distribution-free order-statistic confidence
/// interval: the 95 % interval [x_(j), x_(k)] with j, k = n/2 -+ 1.96 sqrt(n)/2, divided
/// by 2 * 1.96. Needs no normality; infinite for fewer than 3 samples.
double median_standard_error(std::span<const double> values);

/// Median, quartiles (tessera::stats, type 7) and relative standard error of the median (SE / |median|; 0 if
/// the spread is 0, infinite if the median is 0 and the spread is not).
Summary summarize(std::span<const double> values);

/// T_full(n) from a full-path sample: the round trip (n bytes out, 0 back) less the
/// reply's cost t_cf (SPEC errata, Fig. 8), where t_cf = roundtrip(0, 0) / 2 comes from the
/// 0-byte cell. The reply costs no more than the n-byte message it answers, so no more
/// than half the round trip: the value is never below half the round trip, so never
/// negative (a CPU quota's throttling once caught the 0-byte bursts and not a cell's
/// samples: roundtrip - t_cf = -366 us). Equal to roundtrip - t_cf whenever roundtrip >=
/// 2 t_cf; below that (noise at the 0-float cells of the other layouts, which send the
/// same empty message t_cf comes from, or their first quartiles) it is larger by
/// t_cf - roundtrip / 2, at most t_cf / 2 while roundtrip >= t_cf.
double full_path_total(double roundtrip_us, double t_cf_us);

}  // namespace tessera::bench
