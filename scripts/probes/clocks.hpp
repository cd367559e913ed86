#pragma once
// The clocks of the no-MPI quota probes: this thread's CPU time and the wall time, µs.
// No tessera code, as the probes themselves.
#include <time.h>

#include <chrono>

namespace probe {

inline double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e6 + double(t.tv_nsec) / 1e3;
}

inline double wall_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace probe
