// Independent MPI probe for an emulated cluster with a CPU quota per node (4 ranks:
// 0, 1 on node 1 and 2, 3 on node 2, e.g. `tessera-cluster run --nodes 2
// --ranks-per-node 2 --cpu 0.9 -- .../quota_after_compute`): does a message right after
// a compute burst cost more than after an idle pause? Each sample: every rank either
// computes for BURST ms on two threads (as a rank with a spare core does) or sleeps as
// long; a barrier; rank 2 sends BYTES to rank 0, timed on rank 0 from the barrier to the
// arrival. Prints rank 0's medians of REPS samples per mode, two rounds.
//   quota_after_compute [BYTES (default 4 MiB)] [BURST ms (default 20)] [REPS (default 15)]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {
void compute_for(double ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(long(ms * 1000));
  volatile double x = 1;
  while (std::chrono::steady_clock::now() < end)
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int bytes = argc > 1 ? std::atoi(argv[1]) : (4 << 20);
  const double burst = argc > 2 ? std::atof(argv[2]) : 20;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 15;
  if (size != 4 || bytes < 1 || burst < 0 || reps < 1) {
    if (rank == 0) std::fprintf(stderr, "quota_after_compute: 4 ranks; BYTES >= 1, BURST >= 0, REPS >= 1\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<char> buffer(std::size_t(bytes), 1);
  for (int round = 0; round < 2; ++round)
    for (int after_compute = 0; after_compute < 2; ++after_compute) {
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) {
        if (after_compute) {
          std::thread other(compute_for, burst);
          compute_for(burst);
          other.join();
        } else {
          std::this_thread::sleep_for(std::chrono::microseconds(long(burst * 1000)));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        if (rank == 0) MPI_Recv(buffer.data(), bytes, MPI_CHAR, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 2) MPI_Send(buffer.data(), bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        t.push_back(1e6 * (MPI_Wtime() - t0));
        MPI_Barrier(MPI_COMM_WORLD);
      }
      std::sort(t.begin(), t.end());
      if (rank == 0)
        std::printf("round %d after %s %.0f ms: %d B median %.0f us [%.0f-%.0f]\n", round,
                    after_compute ? "compute" : "sleep  ", burst, bytes, t[t.size() / 2], t.front(), t.back());
    }
  MPI_Finalize();
}
