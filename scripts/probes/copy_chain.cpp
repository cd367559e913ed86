// Independent copy probe (no tessera code): the scatter's copy of a SIDE² float image
// into its haloed tile (halo 4, row by row), timed after D MiB were touched in one of
// two ways:
//   sweep  half of D read and the other half written, one stream each (what
//          tessera-bench's ReuseSweep does before its copy_after cells);
//   chain  D MiB of blocks of B MiB, each written from the block before it, which was
//          just written (what a pipeline's stages do: each reads the tile the stage
//          before wrote), so the caches are left full of dirty lines.
// Each line: median [min-max] of 15 samples (each: the copy untimed, the touch, the
// copy timed), µs and ns per float, for D = 8, 16, 40, 64, 160 MiB.
//   copy_chain [SIDE (1024)] [B MiB (2), at most 4: every D holds two blocks or more]
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

float* map_floats(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  madvise(p, bytes, MADV_HUGEPAGE);  // as the library's pool maps its buffers
  std::memset(p, 1, bytes);
  return static_cast<float*>(p);
}

}  // namespace

int main(int argc, char** argv) {
  const int side = argc > 1 ? std::atoi(argv[1]) : 1024;
  const double block_mib = argc > 2 ? std::atof(argv[2]) : 2.0;
  if (side < 64 || side > 8192 || !(block_mib > 0 && block_mib <= 4)) {
    std::fprintf(stderr, "usage: copy_chain [SIDE in 64..8192] [B MiB in (0, 4]]\n");
    return 2;
  }
  const int halo = 4, stride = side + 2 * halo;
  float* image = map_floats(std::size_t(side) * side * 4);
  float* tile = map_floats(std::size_t(stride) * (side + 2 * halo) * 4);
  const std::size_t pool_bytes = std::size_t(160) << 20;
  float* pool = map_floats(pool_bytes);
  auto copy = [&] {
    for (int y = 0; y < side; ++y)
      std::memcpy(tile + std::size_t(y + halo) * stride + halo, image + std::size_t(y) * side,
                  std::size_t(side) * 4);
  };
  // Touches `bytes` of the pool as a chain of `block`-float blocks, each written from
  // the one before it. The sweep is the chain of two blocks: read one half, write the other.
  auto touch = [&](std::size_t bytes, std::size_t block) {
    for (std::size_t b = 1; b < bytes / 4 / block; ++b)
      for (std::size_t i = 0; i < block; ++i) pool[b * block + i] = 0.5f * pool[(b - 1) * block + i] + 1.0f;
  };
  const std::size_t chain_block = std::size_t(block_mib * 1048576.0) / 4;
  std::printf("copy of a %d² image into its haloed tile, chain blocks of %.2f MiB\n", side, block_mib);
  for (int d : {8, 16, 40, 64, 160})
    for (bool chain : {false, true}) {
      const std::size_t bytes = std::size_t(d) << 20;
      std::vector<double> t;
      for (int r = 0; r < 15; ++r) {
        copy();
        touch(bytes, chain ? chain_block : bytes / 8);
        const auto a = std::chrono::steady_clock::now();
        copy();
        t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
      }
      std::sort(t.begin(), t.end());
      std::printf("D %3d MiB %-5s %7.0f us [%.0f-%.0f]  %.3f ns/float\n", d, chain ? "chain" : "sweep", t[7],
                  t[0], t[14], t[7] * 1000.0 / (double(side) * side));
    }
}
