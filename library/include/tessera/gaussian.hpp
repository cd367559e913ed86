#pragma once
// Gaussian derivative kernels and the annotation of the derivative pipeline. Pure.
#include <array>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tessera/image.hpp"
#include "tessera/partition.hpp"

namespace tessera {

/// Smallest sigma whose kernels can be normalised: the first-derivative kernel is
/// divided by sum_j j^2 exp(-j^2 / (2 sigma^2)) / sigma^2, whose j = 1 term must not
/// underflow, i.e. exp(-1 / (2 sigma^2)) >= DBL_MIN: sigma >= 1 / sqrt(-2 ln DBL_MIN)
/// = 0.0265676..., rounded up. Below it Lx, Ly and Lxy would be NaN everywhere.
inline constexpr double kMinSigma = 0.02657;

/// Largest kernel radius (pixels). Bounds the kernels (2 * radius + 1 taps, int) and
/// with them the default sigma (kMaxRadius / 3.75, about 279620); images still have
/// to fit with their halo (see infeasibility()) and in memory.
inline constexpr int kMaxRadius = 1 << 20;

/// Default half-width (radius) of the sampled 1-D Gaussian derivative kernel of
/// `order` (0, 1 or 2) at scale sigma: ceil(k[order] * sigma) with k = {2.1, 3.5, 3.75},
/// at least 1. Reproduces the P-3PC paper's sizes 7/9/9, 15/23/25, 23/37/39 for
/// sigma = 1, 3, 5 (size = 2 * radius + 1). Throws InvalidArgument if sigma is not
/// finite or below kMinSigma, if the radius would exceed kMaxRadius, or if order is
/// not 0, 1, 2.
int default_radius(double sigma, int order);

/// A sampled, normalised 1-D kernel; taps[radius + k] weighs f(x + k).
/// order 0 sums to 1; order 1 gives 1 on f(x) = x; order 2 gives 1 on f(x) = x^2 / 2
/// (and 0 on constants and on x).
struct Kernel1D {
  int order = 0;  ///< derivative order 0..2; -1 for a user's kernel (no symmetry assumed)
  double sigma = 0;
  int radius = 0;
  std::vector<float> taps;  ///< 2 * radius + 1 values
  int size() const { return 2 * radius + 1; }
};

/// Builds the kernel; radius defaults to default_radius(sigma, order). Throws
/// InvalidArgument (one line, with the reason) if the kernel cannot be normalised to
/// finite, meaningful taps: sigma or radius out of range (see validate()), or sigma
/// so far above an explicit radius (more than ~10^4 times) that the order-2 kernel
/// would be rounding noise.
Kernel1D gaussian_kernel(double sigma, int order, std::optional<int> radius = {});

/// The derivatives the library computes: Lx = d/dx, Lxy = d2/dxdy, ...
enum class Derivative { L, Lx, Ly, Lxx, Lxy, Lyy };
inline constexpr std::array kStandardDerivatives{Derivative::Lx, Derivative::Ly, Derivative::Lxx,
                                                 Derivative::Lxy, Derivative::Lyy};
std::string_view to_string(Derivative d);
/// Orders {along x, along y}.
std::array<int, 2> orders_of(Derivative d);

/// Options of the derivative pipeline.
struct GaussianOptions {
  double sigma = 1.0;
  /// Override of the kernel radius for every order (empty: default_radius).
  std::optional<int> radius;
  std::vector<Derivative> derivatives{kStandardDerivatives.begin(), kStandardDerivatives.end()};
};

/// Cheap range checks, before anything is allocated: throws InvalidArgument if sigma
/// is not finite or below kMinSigma, the radius (given, or the default for sigma) is
/// outside [1, kMaxRadius], or no derivatives are requested. kernels_for() checks the
/// rest (a kernel that cannot be normalised). Local.
void validate(const GaussianOptions& options);

/// The three kernels (orders 0, 1, 2) the options use.
std::array<Kernel1D, 3> kernels_for(const GaussianOptions& options);

/// Halo the pipeline needs: half the largest 1-D kernel applied along each axis.
Halo halo_for(const GaussianOptions& options);

// ---------------------------------------------------------------------------------
// Operation annotations: what the scheduler must price, described by the library
// itself rather than by a hand-written table.

enum class Axis { x, y };
std::string_view to_string(Axis a);

/// One separable 1-D filter pass over a tile. Passes along y run over the tile's
/// rows and over the x-halo columns too, (w + 2 * halo.x) x h output pixels, because
/// the x passes that follow need them; passes along x produce w x h pixels.
struct FilterPass {
  Axis axis = Axis::x;
  int taps = 1;   ///< kernel size (2 * radius + 1)
  int order = 0;  ///< derivative order of the kernel (0, 1, 2)
};

/// Everything the scheduler needs about one run of the derivative pipeline.
struct PipelineDescription {
  int width = 0, height = 0;       ///< whole image, pixels
  Halo halo;                       ///< border width along x and y
  int scatters = 1;                ///< images scattered from the root
  int exchanges = 1;               ///< border exchanges per run
  int gathers = 0;                 ///< images gathered to the root (one per derivative)
  std::vector<FilterPass> passes;  ///< per exchange, on every tile
};

/// The pipeline compute_derivatives() runs for these options on a width x height image.
PipelineDescription describe_pipeline(int width, int height, const GaussianOptions& options);

/// Output pixels of one pass on a w x h tile with the given halo (see FilterPass).
inline long long pass_pixels(const FilterPass& p, int w, int h, Halo halo) {
  return p.axis == Axis::y ? (long long)(w + 2 * halo.x) * h : (long long)w * h;
}

// ---------------------------------------------------------------------------------
// Compute.

/// OpenCV's borderInterpolate for BORDER_REFLECT_101: the index in [0, n) that
/// mirroring without repeating the edge pixel maps p to, reflecting as often as
/// needed (period 2 (n - 1)); 0 when n == 1. Precondition n >= 1. Pure.
int reflect_101(int p, int n);

/// Fills the image-edge halos of a haloed tile by mirroring without repeating the
/// edge pixel (BORDER_REFLECT_101), for any image size: on an axis the tile covers
/// whole, the halo may be wider than the image (repeated reflection). `tile` is the interior (w x h) of a buffer with
/// `halo` pixels on every side; `box` is where the tile sits in the whole image.
/// Only sides on the image edge are written. The x-sides are filled for the tile's
/// own rows; call with fill_y=false before the y-exchange and fill_x=false after it
/// to get corners right. Local.
void mirror_image_edges(View tile, Halo halo, const Box& box, int image_width, int image_height, bool fill_x,
                        bool fill_y);

/// One 1-D filter pass, the library's compute primitive: dst(x, y) =
/// sum_k taps[radius + k] * src(x + k, y) for Axis::x (src(x, y + k) for Axis::y).
/// `src` must be readable `radius` pixels beyond dst's extent along the axis (a view
/// into a haloed buffer). Single-threaded. Local.
void filter_pass(ConstView src, View dst, Axis axis, const Kernel1D& kernel);

/// One separable filter of a group applied to the same input: a y pass with `y`, then
/// an x pass with `x` (pointers to kernels the caller keeps alive).
struct SeparableFilter {
  const Kernel1D* x = nullptr;
  const Kernel1D* y = nullptr;
};

/// Applies every filter of `filters` to the haloed tile (halos filled at least
/// (max x radius, max y radius)) into `out` (one w x h view each). Each distinct y
/// kernel's pass is computed once per row, over the tile and the x reach the x passes
/// need. Each output pixel is the same fixed-order sum wherever the tile sits
/// (bit-identical for every decomposition). May use several threads (TBB). Local.
void separable_filters(ConstView tile, Halo halo, std::span<const SeparableFilter> filters,
                       std::span<const View> out);

/// Computes the requested derivatives of the haloed tile (halos already filled) into
/// `out` (one w x h view per derivative, in options.derivatives order). Every output
/// pixel is computed by the same arithmetic wherever the tile sits, so results are
/// bit-identical for every decomposition. May use several threads (TBB). Local.
void compute_derivatives(ConstView tile, Halo halo, const GaussianOptions& options,
                         std::span<const View> out);

/// Sequential reference path: the whole image in, derivatives out (P = 1 semantics).
std::vector<Image> gaussian_derivatives(const Image& image, const GaussianOptions& options);

}  // namespace tessera
