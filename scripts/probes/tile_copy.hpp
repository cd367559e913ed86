#pragma once
// What the copy probes (copy_chain, idle_decay) share, no tessera code: buffers mapped
// as the library's pool maps them, the scatter's copy of a SIDE² float image into its
// haloed tile, and the touches of memory between two copies.
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace probe {

/// `bytes` of fresh memory, huge pages advised (as the library's pool maps its
/// buffers), written once. Exits on failure.
inline float* map_floats(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  madvise(p, bytes, MADV_HUGEPAGE);
  std::memset(p, 1, bytes);
  return static_cast<float*>(p);
}

/// A SIDE² image and its tile with a halo of 4; run() copies the image into the tile's
/// interior row by row, as the scatter does.
struct TileCopy {
  static constexpr int kHalo = 4;
  int side = 0, stride = 0;
  float *image = nullptr, *tile = nullptr;

  explicit TileCopy(int side_)
      : side(side_),
        stride(side_ + 2 * kHalo),
        image(map_floats(std::size_t(side_) * side_ * 4)),
        tile(map_floats(std::size_t(stride) * stride * 4)) {}

  void run() const {
    for (int y = 0; y < side; ++y)
      std::memcpy(tile + std::size_t(y + kHalo) * stride + kHalo, image + std::size_t(y) * side,
                  std::size_t(side) * 4);
  }
  double ns_per_float(double us) const { return us * 1000.0 / (double(side) * side); }
};

/// Touches `bytes` of `pool` as a chain of `block`-float blocks, each written from the
/// one before it. The sweep of tessera-bench's ReuseSweep (half read, half written) is
/// the chain of two blocks: touch(pool, bytes, bytes / 8). Nothing for bytes = 0.
inline void touch(float* pool, std::size_t bytes, std::size_t block) {
  if (block == 0) return;
  for (std::size_t b = 1; b < bytes / 4 / block; ++b)
    for (std::size_t i = 0; i < block; ++i) pool[b * block + i] = 0.5f * pool[(b - 1) * block + i] + 1.0f;
}

}  // namespace probe
