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
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tile_copy.hpp"

int main(int argc, char** argv) {
  const int side = argc > 1 ? std::atoi(argv[1]) : 1024;
  const double block_mib = argc > 2 ? std::atof(argv[2]) : 2.0;
  if (side < 64 || side > 8192 || !(block_mib > 0 && block_mib <= 4)) {
    std::fprintf(stderr, "usage: copy_chain [SIDE in 64..8192] [B MiB in (0, 4]]\n");
    return 2;
  }
  const probe::TileCopy copy(side);
  const std::size_t pool_bytes = std::size_t(160) << 20;
  float* pool = probe::map_floats(pool_bytes);
  const std::size_t chain_block = std::size_t(block_mib * 1048576.0) / 4;
  std::printf("copy of a %d² image into its haloed tile, chain blocks of %.2f MiB\n", side, block_mib);
  for (int d : {8, 16, 40, 64, 160})
    for (bool chain : {false, true}) {
      const std::size_t bytes = std::size_t(d) << 20;
      std::vector<double> t;
      for (int r = 0; r < 15; ++r) {
        copy.run();
        probe::touch(pool, bytes, chain ? chain_block : bytes / 8);
        const auto a = std::chrono::steady_clock::now();
        copy.run();
        t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
      }
      std::sort(t.begin(), t.end());
      std::printf("D %3d MiB %-5s %7.0f us [%.0f-%.0f]  %.3f ns/float\n", d, chain ? "chain" : "sweep", t[7],
                  t[0], t[14], copy.ns_per_float(t[7]));
    }
}
