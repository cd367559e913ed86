// Independent MPI probe for an emulated cluster with a CPU quota per node and one rank per
// node (e.g. `tessera-cluster launch --ranks-per-node 1 -- .../quota_exchange` on 4 nodes
// at --cpu 0.45): what a border exchange and a barrier cost in three states. The ranks
// form a chain (as a 1xP or Px1 grid's strips); the exchange sends BYTES to each
// neighbour and receives as much from each, all nonblocking, as the library's
// `nonblocking` exchange does. Each sample starts after a barrier and is the slowest
// rank's time; before it, every rank either does nothing more (back to back: the
// previous sample's waits just drained the quota), sleeps BURST ms (the quota refills),
// or busy-waits 0.5-1.4 x BURST ms (the quota drained, as a pipeline's ranks leave it:
// they compute or poll for messages all the time). Prints median, mean and range of REPS
// samples per state, for the exchange and for a barrier alone.
//   quota_exchange [BYTES (default 65536)] [BURST ms (default 10)] [REPS (default 40)]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <vector>

namespace {
void busy_for(double ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(long(ms * 1000));
  while (std::chrono::steady_clock::now() < end) {
  }
}

// Both neighbours of the chain, nonblocking: post the receives, then the sends, wait all.
void exchange(int rank, int size, int bytes, const char* out, char* from_left, char* from_right) {
  MPI_Request q[4];
  int n = 0;
  if (rank > 0) MPI_Irecv(from_left, bytes, MPI_CHAR, rank - 1, 1, MPI_COMM_WORLD, &q[n++]);
  if (rank + 1 < size) MPI_Irecv(from_right, bytes, MPI_CHAR, rank + 1, 1, MPI_COMM_WORLD, &q[n++]);
  if (rank > 0) MPI_Isend(out, bytes, MPI_CHAR, rank - 1, 1, MPI_COMM_WORLD, &q[n++]);
  if (rank + 1 < size) MPI_Isend(out, bytes, MPI_CHAR, rank + 1, 1, MPI_COMM_WORLD, &q[n++]);
  MPI_Waitall(n, q, MPI_STATUSES_IGNORE);
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int bytes = argc > 1 ? std::atoi(argv[1]) : 65536;
  const double burst = argc > 2 ? std::atof(argv[2]) : 10;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 40;
  if (size < 2 || bytes < 1 || burst < 0 || reps < 1) {
    if (rank == 0) std::fprintf(stderr, "quota_exchange: 2 ranks or more; BYTES >= 1, BURST >= 0, REPS >= 1\n");
    MPI_Finalize();
    return 2;
  }
  const auto n = static_cast<std::size_t>(bytes);
  std::vector<char> out(n, 1), left(n), right(n);
  const char* states[] = {"back to back", "after sleep", "after busy"};
  for (int barrier_only = 0; barrier_only < 2; ++barrier_only)
    for (int state = 0; state < 3; ++state) {
      std::vector<double> t;
      for (int k = 0; k < reps; ++k) {
        if (state == 1) std::this_thread::sleep_for(std::chrono::microseconds(long(burst * 1000)));
        if (state == 2) busy_for(burst * (0.5 + (k % 7) / 7.0));
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        if (barrier_only)
          MPI_Barrier(MPI_COMM_WORLD);
        else
          exchange(rank, size, bytes, out.data(), left.data(), right.data());
        const double mine = 1e6 * (MPI_Wtime() - t0);
        double slowest = 0;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        t.push_back(slowest);
      }
      if (rank == 0) {
        std::sort(t.begin(), t.end());
        const double mean = std::accumulate(t.begin(), t.end(), 0.0) / double(t.size());
        std::printf("%-8s %-12s %d ranks, %d B: median %.0f us, mean %.0f [%.0f-%.0f]\n",
                    barrier_only ? "barrier" : "exchange", states[state], size, bytes, t[t.size() / 2], mean,
                    t.front(), t.back());
      }
    }
  MPI_Finalize();
}
