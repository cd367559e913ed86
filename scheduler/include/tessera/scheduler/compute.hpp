#pragma once
// Pricing of the compute phase: what one rank's compute_derivatives costs on its tile.
// Pure: no MPI, no SQL (the planning glue fills the tables from the perfdb).
//
// Two kinds of measurements:
//  - pipeline points (preferred): the library's whole compute, compute_derivatives of
//    the standard derivative set, timed on haloed tiles per (kernel taps, threads, tile
//    shape). The library fuses its passes (shared y-smoothings, row strips kept in
//    cache), so its cost is not a sum of single passes, and it depends on tile width
//    and on the number of TBB threads;
//  - pass points (databases from before): single 1-D filter passes, summed over the
//    pipeline's passes and divided by the thread count. Used only when a table has no
//    pipeline points.
#include <array>
#include <utility>
#include <vector>

#include "tessera/gaussian.hpp"
#include "tessera/partition.hpp"
#include "tessera/program_description.hpp"
#include "tessera/scheduler/piecewise.hpp"

namespace tessera::scheduler {

/// Measured cost of one 1-D filter pass: ns per output pixel for a kernel of `taps`
/// along `axis` on a tile_width x tile_height tile, single-threaded.
struct ComputePoint {
  int axis = 0;  ///< 0 = x, 1 = y (tessera::Axis order)
  int taps = 1;
  int tile_width = 0, tile_height = 0;
  double ns_per_pixel = 0;
  bool odd = false;  ///< kernel of odd derivative order (antisymmetric: priced apart)
};

/// Measured cost of the whole derivative pipeline's compute on one tile: ns per
/// interior pixel of a tile_width x tile_height tile for the whole derivative set.
struct PipelinePoint {
  int taps = 1;     ///< sum of the kernel sizes of the pipeline's passes (pipeline_taps)
  int threads = 1;  ///< TBB threads it ran with
  int tile_width = 0, tile_height = 0;
  double ns_per_pixel = 0;
};

/// Measured cost of one primitive kernel of the operation library (tessera::Primitive,
/// perfdb rows kComputePixelwise ...): ns per output pixel on a tile_width x
/// tile_height tile with `threads` TBB threads.
struct PrimitivePoint {
  Primitive primitive = Primitive::pixelwise;
  int axis = 0;  ///< separable: 0 = x, 1 = y; 0 for the others
  int size = 1;  ///< separable, neighbourhood: taps; pixelwise: fused ops; reduction: scalars
  int threads = 1;
  int tile_width = 0, tile_height = 0;
  double ns_per_pixel = 0;
  /// Timed with the tile's data out of the caches (tessera-bench's `*_from_memory`
  /// rows: the tile's input and output were last touched before a sweep of the largest
  /// reuse distance the copies are timed at), where the others are timed on data just
  /// touched. primitive_ns_per_pixel adds what this state costs more, by `coldness`.
  bool from_memory = false;
};

/// The cost key of a pipeline: the sum of the kernel sizes of its 1-D passes. The
/// work per pixel grows linearly with it (every pass is a multiply-add per tap), which
/// is why pipeline points are interpolated in it rather than in sigma (a radius
/// override changes the taps, not sigma).
int pipeline_taps(const PipelineDescription& pipeline);

/// Per-pixel compute costs with interpolation over kernel size, tile shape and threads.
class ComputeTable {
 public:
  ComputeTable() = default;
  /// Pass points only (the old benchmark). Throws InvalidArgument on a point out of
  /// range (taps, tile sides or threads below 1, a negative or non-finite cost).
  explicit ComputeTable(std::vector<ComputePoint> passes) : ComputeTable(std::move(passes), {}) {}
  /// Pass and pipeline points; either may be empty.
  ComputeTable(std::vector<ComputePoint> passes, std::vector<PipelinePoint> pipeline)
      : ComputeTable(std::move(passes), std::move(pipeline), {}) {}
  /// Pass, pipeline and primitive points; any may be empty. Throws InvalidArgument on a
  /// point out of range (sizes, tile sides or threads below 1, a negative or non-finite
  /// cost, an axis other than 0 and 1).
  ComputeTable(std::vector<ComputePoint> passes, std::vector<PipelinePoint> pipeline,
               std::vector<PrimitivePoint> primitives);

  bool empty() const { return points_.empty() && pipeline_points_.empty() && primitive_points_.empty(); }
  /// True when the derivative pipeline can be priced from pipeline or pass points
  /// (compute_us); primitive points alone price it step by step (price_program).
  bool prices_pipeline() const { return !points_.empty() || !pipeline_points_.empty(); }
  /// True when `primitive` can be priced: its own points were measured (either axis for
  /// separable), or for nms, local_max and hysteresis, 3x3 neighbourhood points (what a
  /// database written before they had rows of their own priced them with), or for
  /// hysteresis_growth, hysteresis (a database written before the growing had rows of
  /// its own: its hysteresis rows, the mean of three rounds from the same marks, carry
  /// it, and primitive_ns_per_pixel prices it 0).
  bool has_primitive(Primitive primitive) const;
  /// True when points of `primitive` itself were measured (either axis for separable).
  bool has_own_primitive(Primitive primitive) const;

  /// Primitive points: ns per output pixel of `primitive` with `size` (taps or ops)
  /// along axis (separable only; the other axis's points if this one was never
  /// measured; nms, local_max, hysteresis without points of their own: the
  /// neighbourhood's) on a w x h tile with `threads` threads:
  ///  - tile: per measured size, the widest point at the tile area nearest in log
  ///    scale, times how much more a narrower tile costs per pixel where one area was
  ///    measured at several widths (the ratio to that area's widest, linear in log
  ///    width between them, held past them; 1 without such an area);
  ///  - size: linear between the two bracketing measured sizes, extended past the ends
  ///    with the nearest segment, at least 0 (a pixel-wise sweep is a + b ops, a pass
  ///    a + b taps); one measured size: that size's cost;
  ///  - threads: as pipeline_ns_per_pixel (exact count, speedup linear between two
  ///    counts, in proportion outside them).
  /// `coldness` (0 to 1, MachineParams::memory_coldness of the run's footprint) adds that
  /// share of what the primitive's from-memory points cost more per pixel than its
  /// points of data just touched, both on the from-memory points' tile and thread count
  /// (the nearest at or above `threads`, else the most), at least 0: a program whose
  /// images no longer fit the caches reads and writes them in memory. Nothing without
  /// from-memory points of the primitive (of either axis for separable).
  /// Throws InvalidArgument naming the primitive if it has no points.
  double primitive_ns_per_pixel(Primitive primitive, int axis, int size, int threads, int w, int h,
                                double coldness = 0) const;
  /// True when from-memory points of `primitive` were measured (either axis for separable).
  bool has_from_memory(Primitive primitive) const;
  /// True when whole-pipeline points were measured (then they price the compute).
  bool has_pipeline() const { return !pipeline_points_.empty(); }

  /// Pass points: ns per output pixel of a pass with `taps` along axis (0 x, 1 y) on a
  /// w x h tile: for each measured tap count, the point whose tile area is nearest in
  /// log scale; then linear in taps between the two bracketing tap counts (extended
  /// past the ends with the nearest segment, at least 0). If the axis was never measured
  /// the other axis is used. `odd` selects the points measured for odd-order kernels
  /// when there are any (else the others are used). Precondition: !points().empty().
  double ns_per_pixel(int axis, int taps, int w, int h, bool odd = false) const;
  /// The same with the tile given by log(w * h) (callers pricing many passes per tile).
  double ns_per_pixel_at(int axis, int taps, double log_area, bool odd = false) const;

  /// Pipeline points: ns per interior pixel of the whole compute on a w x h tile with
  /// `taps` (pipeline_taps) and `threads` threads. Precondition: has_pipeline().
  ///  - shape: per measured tile area, linear in log(width) between measured widths;
  ///    then linear in log(area) between the two nearest areas; clamped to the
  ///    measured range (per-pixel cost levels off past the caches; extending a cache
  ///    cliff's slope would not);
  ///  - taps: linear between the two bracketing measured tap counts, extended with the
  ///    nearest segment, but never below the smallest count's cost scaled in
  ///    proportion to taps;
  ///  - threads: the measured thread count's points when it matches; between two
  ///    measured counts the speedup is linear in threads; outside them the nearest
  ///    count's cost scales in proportion (ns x measured / wanted).
  double pipeline_ns_per_pixel(int taps, int threads, int w, int h) const;

  const std::vector<ComputePoint>& points() const { return points_; }
  const std::vector<PipelinePoint>& pipeline_points() const { return pipeline_points_; }
  const std::vector<PrimitivePoint>& primitive_points() const { return primitive_points_; }

 private:
  struct Shape {
    double log_area, ns;
  };
  struct TapGroup {
    int taps;
    std::vector<Shape> shapes;
  };
  // Pipeline points of one area: ns against log(width), held constant past the
  // measured widths.
  struct AreaCurve {
    double log_area = 0;
    PiecewiseLinear by_log_width;
  };
  struct TapSurface {
    int taps = 0;
    std::vector<AreaCurve> areas;  ///< ascending log_area
  };
  struct ThreadGroup {
    int threads = 1;
    std::vector<TapSurface> surfaces;  ///< ascending taps
  };
  double at_threads(const ThreadGroup& group, int taps, double log_w, double log_area) const;

  std::vector<ComputePoint> points_;
  std::array<std::vector<TapGroup>, 4> groups_;  ///< per (odd, axis), sorted by taps
  std::vector<PipelinePoint> pipeline_points_;
  std::vector<ThreadGroup> thread_groups_;  ///< ascending threads

  struct PrimShape {
    double log_area = 0, log_width = 0, ns = 0;
  };
  struct PrimSize {
    int size = 1;
    std::vector<PrimShape> shapes;  ///< as measured
    std::vector<PrimShape> widest;  ///< per area, its widest point (what prices the area)
    /// ns / that area's widest ns against log width, at the smallest area measured at
    /// more than one width; empty: none was.
    PiecewiseLinear narrow;
  };
  struct PrimThreads {
    int threads = 1;
    std::vector<PrimSize> sizes;  ///< ascending size
  };
  static double at_size(const PrimThreads& group, int size, double log_area, double log_width);
  static double at_shape(const PrimSize& size, double log_area, double log_width);
  static void index_shapes(PrimSize& size);  ///< fills widest and narrow from shapes
  using PrimGroups = std::array<std::vector<PrimThreads>, 11>;
  /// The points of data just touched (primitive_ns_per_pixel without coldness), on the
  /// tile of log(w h) and log(w).
  double warm_ns(Primitive primitive, int axis, int size, int threads, double log_area, double log_width) const;
  /// Index of the first of `groups` (ascending threads) with at least `threads` threads,
  /// else the last.
  static std::size_t group_for_threads(const std::vector<PrimThreads>& groups, int threads);
  std::vector<PrimitivePoint> primitive_points_;
  /// index: pixelwise, separable x, separable y, neighbourhood, reduction, ...; ascending threads
  PrimGroups primitive_groups_;
  PrimGroups from_memory_groups_;  ///< the same for the from-memory points
};

/// Compute time of one run of the pipeline (all exchanges) on the slowest tile class
/// of the partition with `threads` threads per rank, µs. With pipeline points: the
/// largest of ns per pixel x interior pixels over the partition's tile shapes. Without:
/// the sum of the pipeline's single passes (pass_pixels each) on the slowest tile,
/// divided by `threads` (linear scaling). With pipeline points and `team` ranks of a
/// node computing at once (compute_team), a w x h tile costs what the node's team
/// x threads threads take for its team tiles, a w x (team h) tile:
/// ns(team x threads, w, team h) x team w h. Precondition: !table.empty(),
/// threads >= 1, team >= 1.
double compute_us(const ComputeTable& table, const Partition& partition, const PipelineDescription& pipeline,
                  int threads = 1, int team = 1);

}  // namespace tessera::scheduler
