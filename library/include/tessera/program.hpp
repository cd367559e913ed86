#pragma once
// The operation library: a user program as a graph of image operations, recorded
// lazily and run later over MPI with a Plan. Reads like OpenCV:
//
//   tessera::Program p;
//   auto img = p.input();
//   auto lx = tessera::gaussian(img, 2.0, 1, 0), ly = tessera::gaussian(img, 2.0, 0, 1);
//   p.output("magnitude", tessera::sqrt(lx * lx + ly * ly));
//   auto results = p.run(session, image, plan);      // whole images on the root
//
// Building the graph is pure (no MPI, no Session): Program::describe() lowers it to
// the ProgramDescription the scheduler prices, without running it. Program::run()
// (tessera::mpi) executes exactly those steps: the input is scattered once, data stays
// distributed, a halo is exchanged only when an operation needs neighbour pixels not
// yet valid (at the widest halo the image's readers need), chains of pixel-wise
// operations are fused into one sweep, and an intermediate is freed after its last
// reader. Every operation gives bit-identical results for every grid and algorithm.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/gaussian.hpp"
#include "tessera/image.hpp"
#include "tessera/phases.hpp"
#include "tessera/plan.hpp"
#include "tessera/program_description.hpp"
#include "tessera/session.hpp"

namespace tessera {

class Session;
class Program;

namespace detail {
struct Graph;  // the recorded operations (src/program_graph.hpp)
}

/// A distributed image of a Program: a cheap handle (copy freely). Its operations
/// record nodes in the program it came from; nothing is computed until Program::run().
/// Mixing handles of two programs throws InvalidArgument.
class DImage {
 public:
  DImage() = default;
  bool valid() const { return graph_ != nullptr; }
  int id() const { return id_; }
  /// For the library's own use.
  DImage(std::shared_ptr<detail::Graph> graph, int id) : graph_(std::move(graph)), id_(id) {}
  const std::shared_ptr<detail::Graph>& graph() const { return graph_; }

 private:
  std::shared_ptr<detail::Graph> graph_;
  int id_ = -1;
};

/// A scalar of a Program: a constant, or a global reduction's result (known on every
/// rank when the program runs), or arithmetic on those (evaluated in double).
class Scalar {
 public:
  Scalar(double value = 0) : value_(value) {}  // NOLINT: a number is a constant scalar
  bool is_constant() const { return graph_ == nullptr; }
  double constant() const { return value_; }
  int id() const { return id_; }
  /// For the library's own use.
  Scalar(std::shared_ptr<detail::Graph> graph, int id) : graph_(std::move(graph)), id_(id) {}
  const std::shared_ptr<detail::Graph>& graph() const { return graph_; }

 private:
  std::shared_ptr<detail::Graph> graph_;
  int id_ = -1;
  double value_ = 0;
};

/// What a run returns: on the root, every image output (whole image) and every scalar
/// output; on other ranks, the scalars only.
struct ProgramResults {
  std::map<std::string, Image> images;
  std::map<std::string, double> scalars;
  /// The communication this run performed, in order, as ProgramSteps (kind, operation,
  /// images, halo, bytes): scatter, exchanges, reductions, gathers, with each round of
  /// an iterative operation listed. On the ranks that ran the plan (empty on idle
  /// ones). Lets tests and tools check a run against describe().
  std::vector<ProgramStep> communication;
};

/// A program: its input, its operations and its outputs. Movable; handles stay valid.
class Program {
 public:
  Program();
  /// The image given to run() (float grey, read on the root). One input per program.
  DImage input();
  /// Marks `image` as a result: gathered to the root by run(). Names are unique.
  void output(const std::string& name, const DImage& image);
  /// Marks `value` as a scalar result (every rank has it after run()).
  void output(const std::string& name, const Scalar& value);
  /// Output names in the order they were declared (images then scalars interleaved).
  std::vector<std::string> output_names() const;

  /// The steps of one run on a width x height image, exactly as run() executes them
  /// (same scatters, exchanges at the same halos and image counts, same primitive
  /// sweeps, reductions and gathers). Pure, local. Throws InvalidArgument for a
  /// program without input or outputs, or a size < 1.
  ProgramDescription describe(int width, int height) const;
  /// The widest halo any tile buffer of the program needs (plan feasibility). Local.
  Halo halo() const;

  /// Runs the program on `image` (used on the root only) with `plan`. Ranks >=
  /// plan.procs() idle; the working ones return without waiting for them. Throws
  /// InfeasiblePlan (on every rank) if the plan does not fit the session or the image.
  /// The first run of the program as it stands lowers it (the stages), agreed on by every
  /// rank; later runs reuse that until the program grows. With `times` (the root decides: every rank times the
  /// run when the root asks), the run starts after a barrier and every stage's share
  /// of it is timed without another barrier, on the root's clock (Session::clock_offset,
  /// estimated collectively at the first timed run): how much later the last rank ended
  /// the stage than the last rank ended the stage before. The phases (scatter; exchange;
  /// compute incl. reductions; gather) so add up to the total, on every working rank
  /// alike. With `steps`, each
  /// communication plan the run executes appends its steps' times on this rank (a
  /// tracing aid, StepSeconds) under its name: "scatter ALG", "exchange ALG halo XxY",
  /// "gather ALG" (one map per plan and image size: a map given runs of another plan
  /// throws InvalidArgument); a timed run also appends, under "stages", every stage's
  /// share of the run as `times` adds them up (labels like "separable gaussian sigma=1
  /// (1,0), gaussian sigma=1 (0,1)"), the same on every working rank. Collective.
  ProgramResults run(const Session& session, const Image& image, const Plan& plan,
                     PhaseSeconds* times = nullptr, std::map<std::string, StepSeconds>* steps = nullptr) const;

  const std::shared_ptr<detail::Graph>& graph() const { return graph_; }

 private:
  std::shared_ptr<detail::Graph> graph_;
};

// --- pixel-wise operations (fused: a chain costs one sweep) ------------------------
DImage operator+(const DImage& a, const DImage& b);
DImage operator-(const DImage& a, const DImage& b);
DImage operator*(const DImage& a, const DImage& b);
DImage operator/(const DImage& a, const DImage& b);
DImage operator+(const DImage& a, const Scalar& b);
DImage operator-(const DImage& a, const Scalar& b);
DImage operator*(const DImage& a, const Scalar& b);
DImage operator/(const DImage& a, const Scalar& b);
DImage operator+(const Scalar& a, const DImage& b);
DImage operator-(const Scalar& a, const DImage& b);
DImage operator*(const Scalar& a, const DImage& b);
DImage operator/(const Scalar& a, const DImage& b);
DImage operator-(const DImage& a);
DImage abs(const DImage& a);
DImage sqrt(const DImage& a);
DImage min(const DImage& a, const DImage& b);
DImage max(const DImage& a, const DImage& b);
DImage min(const DImage& a, const Scalar& b);
DImage max(const DImage& a, const Scalar& b);
/// atan2(y, x) per pixel, radians in [-pi, pi] (float std::atan2).
DImage atan2(const DImage& y, const DImage& x);
/// sqrt(x^2 + y^2) per pixel (cv::magnitude).
DImage magnitude(const DImage& x, const DImage& y);
/// Comparisons give 1 where true and 0 elsewhere (float), like a threshold mask.
DImage operator<(const DImage& a, const Scalar& b);
DImage operator<=(const DImage& a, const Scalar& b);
DImage operator>(const DImage& a, const Scalar& b);
DImage operator>=(const DImage& a, const Scalar& b);
DImage operator<(const DImage& a, const DImage& b);
DImage operator<=(const DImage& a, const DImage& b);
DImage operator>(const DImage& a, const DImage& b);
DImage operator>=(const DImage& a, const DImage& b);
/// `mask` != 0 ? a : b per pixel.
DImage select(const DImage& mask, const DImage& a, const DImage& b);
/// 1 where a > t, else 0 (cv::threshold THRESH_BINARY with maxval 1).
inline DImage threshold(const DImage& a, const Scalar& t) { return a > t; }

// --- scalar arithmetic (double) -----------------------------------------------------
Scalar operator+(const Scalar& a, const Scalar& b);
Scalar operator-(const Scalar& a, const Scalar& b);
Scalar operator*(const Scalar& a, const Scalar& b);
Scalar operator/(const Scalar& a, const Scalar& b);

// --- convolution and neighbourhood operations ---------------------------------------
/// Separable convolution (cv::sepFilter2D, correlation): a y pass with `ky` over the
/// rows (and the x halo), then an x pass with `kx`; image edges BORDER_REFLECT_101.
/// Kernels from gaussian_kernel() or make_kernel(). Halo: (kx.radius, ky.radius).
DImage sep_filter(const DImage& a, const Kernel1D& kx, const Kernel1D& ky);
/// Gaussian derivative of order (ox, oy), each 0..2, at scale sigma (SPEC kernels;
/// `radius` overrides the default radius of every order). Same bits as
/// tessera-gauss's derivatives. Throws InvalidArgument for bad sigma/orders.
DImage gaussian(const DImage& a, double sigma, int ox, int oy, std::optional<int> radius = {});
/// 3x3 or 5x5 correlation (cv::filter2D): taps row-major, taps[(dy + r) * k + dx + r]
/// weighs a(x + dx, y + dy); summed in that fixed order; edges BORDER_REFLECT_101.
DImage filter2d(const DImage& a, const std::vector<float>& taps);
/// Non-maximum suppression (Canny): 1 where `m` is not below either neighbour along
/// the gradient direction atan2(gy, gx) quantised to 0, 45, 90 or 135 degrees
/// (round to nearest multiple of 45, halves away from zero; y points down, so 45
/// degrees pairs (x+1, y+1) with (x-1, y-1)); ties survive; else 0. Halo 1 of m.
DImage non_max_suppression(const DImage& m, const DImage& gx, const DImage& gy);
/// 1 where a pixel is a maximum of its 3x3 neighbourhood, else 0. Tie rule: it must be
/// > the neighbours before it in raster order (the row above and its left pixel) and
/// >= those after it, so a plateau yields exactly one maximum (its first pixel in
/// raster order that beats the rest of the neighbourhood). Edges BORDER_REFLECT_101.
DImage local_maxima(const DImage& a);
/// Hysteresis: 1 on pixels with strong != 0 and on pixels with weak != 0 that are
/// 8-connected to such a pixel through weak pixels, anywhere in the image (across
/// tiles: exchange + local propagation until no rank changes anything); else 0.
DImage hysteresis(const DImage& strong, const DImage& weak);

// --- global reductions (every rank gets the same, grid-independent value) ----------
/// Exact sum of the pixels (an exact fixed-point accumulator, rounded once to double):
/// the same bits on every grid. NaN/Inf propagate.
Scalar sum(const DImage& a);
/// Smallest / largest pixel, NaNs ignored (NaN if every pixel is NaN).
Scalar min_of(const DImage& a);
Scalar max_of(const DImage& a);
/// sum(a) / pixel count.
Scalar mean(const DImage& a);
/// Pixels != 0 (cv::countNonZero; NaN counts).
Scalar count_nonzero(const DImage& a);

/// A user's 1-D kernel (any odd size >= 1, any values); taps[radius + k] weighs
/// f(x + k). Summed in ascending k order. Throws InvalidArgument for even sizes.
Kernel1D make_kernel(const std::vector<float>& taps);

}  // namespace tessera
