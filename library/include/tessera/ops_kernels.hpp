#pragma once
// The primitive tile kernels of the operation library (tessera::Primitive): what every
// operation's compute is made of, and what tessera-bench times for the scheduler
// (perfdb rows kComputePixelwise, kComputeSeparable, kComputeNeighbourhood,
// kComputeReduction). Each is local, pure and deterministic: a fixed order of
// arithmetic per output pixel (the library compiles with -ffp-contract=off), so every
// decomposition gives the same bits; rows are spread over TBB threads.
#include <span>

#include "tessera/gaussian.hpp"
#include "tessera/image.hpp"

namespace tessera::kernels {

/// One sweep evaluating a chain of `ops` fused elementary operations per pixel
/// (multiply-add, absolute value, minimum, maximum in turn), dst = chain(src): the cost
/// model of a pixel-wise expression, a + b ops per pixel. src and dst are w x h and
/// may be the same view. Precondition: ops >= 1, equal sizes. Local; TBB over rows.
void pixelwise_sweep(ConstView src, View dst, int ops);

/// One separable 1-D pass of taps.size() taps (odd) along `axis`:
/// dst(x, y) = sum_k taps[r + k] * src(x + k, y) (axis x) or src(x, y + k) (axis y),
/// r = taps.size() / 2, summed in k order. `src` must be readable r pixels beyond dst's
/// extent along the axis (a view into a haloed buffer). Local; TBB over rows.
void separable_pass(ConstView src, View dst, Axis axis, std::span<const float> taps);

/// A size x size 2-D neighbourhood filter (size 3 or 5): dst(x, y) = sum over the
/// window of kernel[(j + r) * size + (i + r)] * src(x + i, y + j), rows then columns in
/// order. `src` must be readable r = size / 2 pixels around dst's extent.
/// Precondition: kernel.size() == size * size. Local; TBB over rows.
void neighbourhood_filter(ConstView src, View dst, std::span<const float> kernel, int size);

/// Sum (in double), minimum and maximum of a tile's pixels. Each row is summed in eight
/// lanes (pixel x in lane x % 8) folded in lane order, and rows in row order, whatever
/// the threads: the sum has the same bits for one tile on every run.
struct TileReduction {
  double sum = 0, min = 0, max = 0;
  long long count = 0;
};
/// The reduction sweep: every pixel of `src` once. An empty view gives count 0 and
/// min = +inf, max = -inf. Local; TBB over rows.
TileReduction reduce_tile(ConstView src);

}  // namespace tessera::kernels
