// Independent memory probe (no tessera code), shaped like the 2048² derivative compute's
// traffic: THREADS threads (default 2), each iteration every thread reads its share of
// a 2048² float image and updates five outputs of that share (80 MiB written and read
// in all). Prints the median of each group of 10 iterations, µs; ITERS in all (default
// 100). A quiet period of the project's VM reads 4.0–4.1 ms.
//   memory_loop [THREADS] [ITERS]
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 100;
  if (threads < 1 || iters < 10) {
    std::fprintf(stderr, "usage: memory_loop [THREADS >= 1] [ITERS >= 10]\n");
    return 2;
  }
  const std::size_t n = (2048u * 2048u) / std::size_t(threads);
  std::vector<std::vector<float>> in(threads, std::vector<float>(n, 1.f)), out(5 * threads, std::vector<float>(n, 0.f));
  std::vector<double> t(iters);
  std::barrier sync(threads + 1);
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      for (int it = 0; it < iters; ++it) {
        sync.arrive_and_wait();
        const float* a = in[k].data();
        for (int o = 0; o < 5; ++o) {
          float* b = out[5 * k + o].data();
          const float c = 1.f + float(o);
          for (std::size_t i = 0; i < n; ++i) b[i] = a[i] * c + b[i] * 0.5f;
        }
        sync.arrive_and_wait();
      }
    });
  for (int it = 0; it < iters; ++it) {
    const auto s = std::chrono::steady_clock::now();
    sync.arrive_and_wait();  // go
    sync.arrive_and_wait();  // done
    t[it] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s).count();
  }
  for (auto& th : pool) th.join();
  for (int i = 0; i + 10 <= iters; i += 10) {
    std::vector<double> w(t.begin() + i, t.begin() + i + 10);
    std::sort(w.begin(), w.end());
    std::printf("%.0f ", w[5]);
  }
  std::printf("\n");
}
