// Independent compute probe (no tessera code): how the speed of one thread and of two
// threads of one process drifts over time. Every second for SECONDS seconds it times
// REPS alternated samples of a derivative-like compute (four 1-D passes of an 11-tap
// kernel over a SIDE x SIDE/2 float half-image, rows split between the threads) on one
// thread and on two (the calling thread and a worker that lives for the whole run, as a
// thread pool's), and prints the elapsed second, both medians, ms, and their ratio
// (two / one: 0.5 = two full cores, 1 = no gain). A machine whose second core comes and
// goes shows the ratio moving between 0.5 and 1; its duration says how long a state lasts.
//   threads_drift [SECONDS] [SIDE] [REPS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "median.hpp"
#include "worker.hpp"

namespace {

using probe::median;
using Clock = std::chrono::steady_clock;
double now_ms() { return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count(); }

// Rows [y0, y1) of out: four passes of an 11-tap smoothing along x then y, in place.
void passes(const std::vector<float>& in, std::vector<float>& mid, std::vector<float>& out, int w, int y0, int y1,
            int h) {
  constexpr int r = 5;
  const float k[2 * r + 1] = {0.01f, 0.03f, 0.07f, 0.12f, 0.16f, 0.22f, 0.16f, 0.12f, 0.07f, 0.03f, 0.01f};
  for (int pass = 0; pass < 2; ++pass)
    for (int y = y0; y < y1; ++y) {
      const float* src = in.data() + std::size_t(y) * w;
      float* m = mid.data() + std::size_t(y) * w;
      for (int x = r; x < w - r; ++x) {
        float s = 0;
        for (int i = -r; i <= r; ++i) s += k[i + r] * src[x + i];
        m[x] = s;
      }
      float* o = out.data() + std::size_t(y) * w;
      for (int x = 0; x < w; ++x) {
        float s = 0;
        for (int i = -r; i <= r; ++i) s += k[i + r] * in[std::size_t(std::clamp(y + i, 0, h - 1)) * w + x];
        o[x] = s + m[x];
      }
    }
}

}  // namespace

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 60;
  const int side = argc > 2 ? std::atoi(argv[2]) : 1024;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 7;
  if (seconds < 1 || side < 64 || reps < 1) {
    std::fprintf(stderr, "usage: threads_drift [SECONDS >= 1] [SIDE >= 64] [REPS >= 1]\n");
    return 2;
  }
  const int w = side, h = side / 2;
  std::vector<float> in(std::size_t(w) * h), mid(in.size()), out(in.size());
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0, 1);
  for (float& v : in) v = u(rng);
  probe::Worker worker([&] { passes(in, mid, out, w, h / 2, h, h); });
  const double t0 = now_ms();
  for (int s = 0; s < seconds; ++s) {
    std::vector<double> one, two;
    for (int i = 0; i < reps; ++i) {
      double t = now_ms();
      passes(in, mid, out, w, 0, h, h);
      one.push_back(now_ms() - t);
      t = now_ms();
      worker.run();
      passes(in, mid, out, w, 0, h / 2, h);
      worker.wait();
      two.push_back(now_ms() - t);
    }
    const double a = median(one), b = median(two);
    std::printf("%6.1f s  one %.2f ms  two %.2f ms  two/one %.3f\n", (now_ms() - t0) / 1000, a, b, b / a);
    std::fflush(stdout);
    const double next = t0 + 1000.0 * (s + 1);
    while (now_ms() < next) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}
