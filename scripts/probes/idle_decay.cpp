// Independent copy probe (no tessera code): does time alone, with none of our own
// memory traffic, make a copy's buffers colder? The scatter's copy of a SIDE² float
// image into its haloed tile (halo 4, row by row), each sample: the copy untimed, D MiB
// touched (half read, half written, as tessera-bench's ReuseSweep; D = 0: nothing),
// then T ms of spinning on the clock (no memory), then the copy timed. Prints the median
// [min-max] of 21 samples, µs and ns per float, per (D, T), and how long the sweep took.
// A copy that grows with T at fixed D is losing its cached lines to something other
// than this process (the VM's other tenants, the hypervisor): the state a pipeline's
// copies meet depends on how long its run takes, not only on what it touches.
//   idle_decay [SIDE (1024)] [D MiB, comma-separated (0,28)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tile_copy.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double since_us(Clock::time_point a) {
  return std::chrono::duration<double, std::micro>(Clock::now() - a).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int side = argc > 1 ? std::atoi(argv[1]) : 1024;
  std::vector<int> distances;
  std::stringstream list(argc > 2 ? argv[2] : "0,28");
  for (std::string item; std::getline(list, item, ',');) distances.push_back(std::atoi(item.c_str()));
  const bool ok = std::all_of(distances.begin(), distances.end(), [](int d) { return d >= 0 && d <= 512; });
  if (side < 64 || side > 8192 || distances.empty() || !ok) {
    std::fprintf(stderr, "usage: idle_decay [SIDE in 64..8192] [D MiB in 0..512, comma-separated]\n");
    return 2;
  }
  const probe::TileCopy copy(side);
  const std::size_t largest = std::size_t(*std::max_element(distances.begin(), distances.end())) << 20;
  float* pool = probe::map_floats(std::max<std::size_t>(largest, 4096));  // mmap maps no 0 bytes
  std::printf("copy of a %d² image into its haloed tile after D MiB touched and T ms idle\n", side);
  for (int d : distances) {
    const std::size_t bytes = std::size_t(d) << 20;
    for (double ms : {0.0, 0.3, 1.0, 3.0, 10.0, 30.0}) {
      std::vector<double> t, sweep;
      for (int r = 0; r < 21; ++r) {
        copy.run();
        const auto s = Clock::now();
        probe::touch(pool, bytes, bytes / 8);
        sweep.push_back(since_us(s));
        const auto idle = Clock::now();
        while (since_us(idle) < ms * 1000.0) {
        }
        const auto a = Clock::now();
        copy.run();
        t.push_back(since_us(a));
      }
      std::sort(t.begin(), t.end());
      std::sort(sweep.begin(), sweep.end());
      std::printf("D %3d MiB (sweep %6.0f us)  T %5.1f ms  %7.0f us [%.0f-%.0f]  %.3f ns/float\n", d,
                  sweep[10], ms, t[10], t[0], t[20], copy.ns_per_float(t[10]));
    }
  }
}
