#pragma once
// Summary statistics of repeated timings: quantiles, median, minimum, maximum and the
// spread max/min - 1. One definition for the benchmarker, tessera-validate and
// tessera-gauss --bench, so their figures can be compared. Pure (no MPI); units are
// whatever the samples are in.
#include <span>

namespace tessera::stats {

/// The p-quantile, 0 <= p <= 1, by linear interpolation between order statistics
/// (Hyndman-Fan type 7, the default of R and NumPy): h = p (n - 1),
/// x_(floor h) + (h - floor h) (x_(floor h + 1) - x_(floor h)). Throws InvalidArgument on
/// no values or p outside [0, 1]. Local.
double quantile(std::span<const double> values, double p);

/// quantile(values, 0.5): the middle value, or for an even count the lower middle plus
/// half the gap to the upper one. Throws InvalidArgument on no values. Local.
double median(std::span<const double> values);

/// Smallest and largest value. Throw InvalidArgument on no values. Local.
double min(std::span<const double> values);
double max(std::span<const double> values);

/// Relative spread max / min - 1 (0.05: the slowest sample took 5 % longer than the
/// fastest). Throws InvalidArgument on no values or a minimum <= 0. Local.
double spread(std::span<const double> values);

/// Quantiles of values already sorted ascending (no copy, no check beyond asserts): for
/// callers that take several quantiles of one sample set.
double sorted_quantile(std::span<const double> sorted, double p);

}  // namespace tessera::stats
