#pragma once
// Model parameters of one machine as plain values: what the benchmarker measured, in the
// form the cost models consume. Pure: no MPI, no SQL (the perfdb glue fills these in).
#include <array>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/names.hpp"

namespace tessera::scheduler {

/// Communication level of a rank pair: same node (shared memory) or across nodes.
enum class Level { intra, inter };
std::string_view to_string(Level level);
/// "intra" or "inter"; throws InvalidArgument otherwise.
Level parse_level(std::string_view name);

/// A piecewise-linear function through sorted (x, y) points. Between points it
/// interpolates; below the first and past the last point it extends the first / last
/// segment (a single point is a constant). Empty functions are invalid to evaluate.
class PiecewiseLinear {
 public:
  PiecewiseLinear() = default;
  /// Points in any order; equal x values are averaged. Throws InvalidArgument on
  /// non-finite values.
  explicit PiecewiseLinear(std::vector<std::pair<double, double>> points);
  /// Value at x. Precondition: !empty(). Inline: searches evaluate tables millions of
  /// times, and tables hold a handful of sizes, so a short scan beats bisection.
  double operator()(double x) const {
    const std::size_t n = xs_.size();
    if (n == 1) return ys_[0];
    std::size_t i = 0;  // segment [i, i+1] holding x, clamped to the end segments
    while (i + 2 < n && x >= xs_[i + 1]) ++i;
    return ys_[i] + (x - xs_[i]) * slopes_[i];
  }
  bool empty() const { return xs_.empty(); }
  const std::vector<double>& xs() const { return xs_; }
  const std::vector<double>& ys() const { return ys_; }

 private:
  std::vector<double> xs_, ys_, slopes_;
};

/// P-3PC measurements of one level: T_path,layout(bytes) in µs, each stored value a
/// TOTAL (constant included, SPEC errata), one curve per (path, layout).
struct P3pcTable {
  std::array<PiecewiseLinear, 12> curves;  ///< index: path * 4 + layout
  PiecewiseLinear& curve(Path p, Layout l) { return curves[int(p) * 4 + int(l)]; }
  const PiecewiseLinear& curve(Path p, Layout l) const { return curves[int(p) * 4 + int(l)]; }
  /// True when every (path, layout) curve has at least one point.
  bool complete() const;
  /// True when no curve has a point.
  bool empty() const;
};

/// log_3P parameters of one level (log3P paper section 2.2, 2log{2,3}P eq. 4), each a
/// piecewise-linear function of the message size in bytes, µs:
/// o_mw middleware overhead (contiguous), l_mw extra middleware latency of a message
/// noncontiguous at BOTH ends (half of it is charged per noncontiguous end), o_net the
/// network overhead (empty or zero for intra-node).
struct Log3pLevel {
  PiecewiseLinear o_mw, l_mw, o_net;
  bool empty() const { return o_mw.empty(); }
};

/// LogGP parameters valid for messages of at least `min_bytes` bytes (LogGP paper
/// section 2.6: one set per detected protocol). L, o, g in µs, G in µs per byte.
struct LoggpRange {
  double min_bytes = 0;
  double L = 0, o = 0, g = 0, G = 0;
};

/// LoGPC contention parameters (LoGPC paper section 3, k-ary n-cube): network
/// dimension n and average distance per dimension k_d. k_d <= 0 means "derive it
/// from the number of ranks as a square mesh" ((k^2 - 1) / (3k), k = ceil(sqrt(P))).
/// The channel time per byte defaults to the LogGP G of the message's range.
struct LogpcParams {
  int dimensions = 2;
  double avg_distance = 0;
  std::optional<double> channel_us_per_byte;
};

/// Measured cost of one 1-D filter pass: ns per output pixel for a kernel of `taps`
/// along `axis` on a tile_width x tile_height tile.
struct ComputePoint {
  int axis = 0;  ///< 0 = x, 1 = y (tessera::Axis order)
  int taps = 1;
  int tile_width = 0, tile_height = 0;
  double ns_per_pixel = 0;
  bool odd = false;  ///< kernel of odd derivative order (antisymmetric: priced apart)
};

/// Per-pixel compute costs with interpolation over taps and tile size.
class ComputeTable {
 public:
  ComputeTable() = default;
  explicit ComputeTable(std::vector<ComputePoint> points);
  bool empty() const { return points_.empty(); }
  /// ns per output pixel of a pass with `taps` along axis (0 x, 1 y) on a w x h tile:
  /// for each measured tap count, the point whose tile area is nearest in log scale;
  /// then linear in taps between the two bracketing tap counts (extended past the
  /// ends with the nearest segment, at least 0). If the axis was never measured the
  /// other axis is used. Precondition: !empty().
  /// `odd` selects the points measured for odd-order kernels when there are any (else
  /// the others are used).
  double ns_per_pixel(int axis, int taps, int w, int h, bool odd = false) const;
  /// The same with the tile given by log(w * h) (callers pricing many passes per tile).
  double ns_per_pixel_at(int axis, int taps, double log_area, bool odd = false) const;
  const std::vector<ComputePoint>& points() const { return points_; }

 private:
  struct Shape {
    double log_area, ns;
  };
  struct TapGroup {
    int taps;
    std::vector<Shape> shapes;
  };
  std::vector<ComputePoint> points_;
  std::array<std::vector<TapGroup>, 4> groups_;  ///< per (odd, axis), sorted by taps
};

/// Where ranks sit: block placement, rank r on node r / ranks_per_node.
/// ranks_per_node <= 0 means every rank on one node. cores_per_node > 0 lets the search
/// charge oversubscription: ranks sharing a core compute one after the other.
struct Placement {
  int ranks_per_node = 0;
  int cores_per_node = 0;  ///< 0 = unknown (every rank has a core of its own)
  int node_of(int rank) const { return ranks_per_node > 0 ? rank / ranks_per_node : 0; }
  Level level(int a, int b) const { return node_of(a) == node_of(b) ? Level::intra : Level::inter; }
};

/// Everything the models know about one machine.
struct MachineParams {
  std::string name;
  std::array<P3pcTable, 2> p3pc;                 ///< index: Level
  std::array<Log3pLevel, 2> log3p;               ///< index: Level
  std::array<std::vector<LoggpRange>, 2> loggp;  ///< index: Level, sorted by min_bytes
  LogpcParams logpc;
  ComputeTable compute;
  Placement placement;

  /// The P-3PC table of `level`, or of the other level if that one is empty.
  /// Throws InvalidArgument if both are empty.
  const P3pcTable& p3pc_for(Level level) const;
};

/// Parses SPEC's P-3PC CSV (header `path,layout,floats,time_us`, `floats` counts 4-byte
/// values, 0 allowed) into a table. Blank lines and lines starting with '#' are
/// skipped. Throws InvalidArgument naming the line on a malformed row.
P3pcTable parse_p3pc_csv(std::istream& in);
P3pcTable parse_p3pc_csv(std::string_view text);
/// The table as SPEC's CSV (sizes converted back to floats).
std::string to_csv(const P3pcTable& table);

/// LogGP parameters derived from a P-3PC table when none were measured, per protocol
/// range between measured sizes: o = g = T_send,cc(0), L = T_full,cc(0) - 2o (at
/// least 0), G = slope of T_full,cc on the range.
std::vector<LoggpRange> loggp_from_p3pc(const P3pcTable& table);
/// log_3P parameters derived from a P-3PC table: o_mw(s) = T_full,cc(s) (the whole
/// contiguous cost, o_net = 0), l_mw(s) = T_full,nn(s) - T_full,cc(s) (at least 0).
Log3pLevel log3p_from_p3pc(const P3pcTable& table);

}  // namespace tessera::scheduler
