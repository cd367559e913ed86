// Independent MPI probe for an emulated cluster with a CPU quota per node and one rank per
// node (e.g. `tessera-cluster launch --ranks-per-node 1 -- .../quota_wait` on 4 nodes at
// --cpu 0.45): does a rank that waits for a message by spinning (MPI_Wait, MPI_Recv: Open
// MPI polls) pay for it later, because the spinning spent its node's quota? A pipeline's
// shape, one rank per node: the root sends TILE bytes to every other rank in turn
// (blocking sends, a scatter), the ranks then exchange HALO bytes with their neighbours in
// a chain (nonblocking, a border exchange), compute COMPUTE ms of CPU each, and send TILE
// bytes back to the root in turn (a gather). Every wait either spins (MPI_Wait) or polls
// with MPI_Test and a SLEEP µs sleep between tests, the two alternated sample by sample.
// Prints, per way of waiting, the median and range of REPS samples of each stage (from
// the last rank's end of the stage before to the last rank's end of it; the emulated
// nodes share one clock) and of the whole.
//   quota_wait [TILE (default 1048576)] [HALO (default 16384)] [COMPUTE ms (default 8)]
//              [SLEEP us (default 50)] [REPS (default 30)]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "median.hpp"

namespace {

using probe::median;

int sleep_us = 50;

void wait_all(int n, MPI_Request* q, bool sleepy) {
  if (!sleepy) {
    MPI_Waitall(n, q, MPI_STATUSES_IGNORE);
    return;
  }
  for (int done = 0;;) {
    MPI_Testall(n, q, &done, MPI_STATUSES_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
  }
}

void send(const char* at, int bytes, int to, bool sleepy) {
  MPI_Request q;
  MPI_Isend(at, bytes, MPI_CHAR, to, 1, MPI_COMM_WORLD, &q);
  wait_all(1, &q, sleepy);
}

void recv(char* at, int bytes, int from, bool sleepy) {
  MPI_Request q;
  MPI_Irecv(at, bytes, MPI_CHAR, from, 1, MPI_COMM_WORLD, &q);
  wait_all(1, &q, sleepy);
}

void busy_for(double ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(long(ms * 1000));
  while (std::chrono::steady_clock::now() < end) {
  }
}

// CPU time, not wall time: the compute's work is the same however often the quota stops it.
void compute_for(double ms) {
  timespec t0{}, t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  while (1e3 * double(t.tv_sec - t0.tv_sec) + 1e-6 * double(t.tv_nsec - t0.tv_nsec) < ms);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int tile = argc > 1 ? std::atoi(argv[1]) : 1 << 20;
  const int halo = argc > 2 ? std::atoi(argv[2]) : 16384;
  const double compute = argc > 3 ? std::atof(argv[3]) : 8;
  sleep_us = argc > 4 ? std::atoi(argv[4]) : 50;
  const int reps = argc > 5 ? std::atoi(argv[5]) : 30;
  if (size < 2 || tile < 1 || halo < 1 || compute < 0 || sleep_us < 1 || reps < 1) {
    if (rank == 0)
      std::fprintf(stderr,
                   "quota_wait: 2 ranks or more; TILE, HALO >= 1 B, COMPUTE >= 0, SLEEP >= 1, REPS >= 1\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<char> image(std::size_t(tile) * std::size_t(size), 1), mine(std::size_t(tile), 2);
  std::vector<char> out(std::size_t(halo), 3), left(std::size_t(halo), 0), right(std::size_t(halo), 0);
  const char* stage_names[] = {"scatter", "exchange", "compute", "gather", "total"};
  std::vector<double> t[2][5];
  for (int k = 0; k < 2 * reps; ++k) {
    const bool sleepy = k % 2 == 1;
    busy_for(3 + (k % 5));  // a previous program's work: the quota is drained, as in a run
    MPI_Barrier(MPI_COMM_WORLD);
    double end[4];
    const double t0 = MPI_Wtime();
    if (rank == 0)
      for (int r = 1; r < size; ++r) send(image.data() + std::size_t(r) * std::size_t(tile), tile, r, sleepy);
    else
      recv(mine.data(), tile, 0, sleepy);
    end[0] = MPI_Wtime();
    MPI_Request q[4];
    int n = 0;
    if (rank > 0) MPI_Irecv(left.data(), halo, MPI_CHAR, rank - 1, 2, MPI_COMM_WORLD, &q[n++]);
    if (rank + 1 < size) MPI_Irecv(right.data(), halo, MPI_CHAR, rank + 1, 2, MPI_COMM_WORLD, &q[n++]);
    if (rank > 0) MPI_Isend(out.data(), halo, MPI_CHAR, rank - 1, 2, MPI_COMM_WORLD, &q[n++]);
    if (rank + 1 < size) MPI_Isend(out.data(), halo, MPI_CHAR, rank + 1, 2, MPI_COMM_WORLD, &q[n++]);
    wait_all(n, q, sleepy);
    end[1] = MPI_Wtime();
    compute_for(compute);
    end[2] = MPI_Wtime();
    if (rank == 0)
      for (int r = 1; r < size; ++r) recv(image.data() + std::size_t(r) * std::size_t(tile), tile, r, sleepy);
    else
      send(mine.data(), tile, 0, sleepy);
    end[3] = MPI_Wtime();
    double last[4];
    MPI_Reduce(end, last, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      double before = t0;
      for (int s = 0; s < 4; ++s) {
        t[sleepy][s].push_back(1e6 * (last[s] - before));
        before = last[s];
      }
      t[sleepy][4].push_back(1e6 * (last[3] - t0));
    }
  }
  if (rank == 0)
    for (int sleepy = 0; sleepy < 2; ++sleepy) {
      std::printf("%-16s", sleepy ? "sleep-poll" : "spin (MPI_Wait)");
      for (int s = 0; s < 5; ++s) {
        const auto [lo, hi] = std::minmax_element(t[sleepy][s].begin(), t[sleepy][s].end());
        std::printf("  %s %.0f [%.0f-%.0f]", stage_names[s], median(t[sleepy][s]), *lo, *hi);
      }
      std::printf("  (us; %d ranks, tile %d B, halo %d B, compute %.1f ms, sleep %d us)\n", size, tile, halo,
                  compute, sleep_us);
    }
  MPI_Finalize();
}
