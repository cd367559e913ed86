// Independent MPI probe (no tessera code): the one-way latency between two ranks, the
// median of 2000 8-byte round trips (after 100 untimed), halved, in µs, with the 10th
// and 90th percentiles. On the project's VM it reads 0.14-0.18 µs, or 0.37-0.47 µs in
// stretches of seconds to a minute in which the host holds the two vCPUs further
// apart; gather2x1 then reads ~5.3 ms instead of ~1.4. tessera-validate reads the same
// latency (Team::pair_latency_us) before each timed round and waits for the low state.
//   mpirun -n 2 pingpong
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "pingpong: run with exactly 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  constexpr int kUntimed = 100, kTimed = 2000;
  double word = 0;
  std::vector<double> t;
  for (int r = 0; r < kUntimed + kTimed; ++r) {
    const double t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(&word, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(&word, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&word, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&word, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    }
    if (r >= kUntimed) t.push_back(1e6 * (MPI_Wtime() - t0) / 2);
  }
  std::sort(t.begin(), t.end());
  if (rank == 0)
    std::printf("median %.3f us [p10 %.3f, p90 %.3f]\n", t[t.size() / 2], t[t.size() / 10], t[t.size() * 9 / 10]);
  MPI_Finalize();
}
