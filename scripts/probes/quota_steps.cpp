// Independent MPI probe for an emulated cluster with a CPU quota per node and one rank per
// node (e.g. `tessera-cluster launch --ranks-per-node 1 -- .../quota_steps 100 10` on 2
// nodes at --cpu 0.45): whether a quota's stops come with the waits for messages or with
// the CPU time a run spends. A run is STEPS steps, each COMPUTE µs of spinning and then an
// MPI_Sendrecv of BYTES with the partner rank (rank ^ 1); runs follow each other back to
// back with a barrier between them, as tessera-validate's items do, so every rank polls
// or computes all the time. Prints the slowest rank's median, quartiles and mean of REPS
// runs (after 3 untimed), beside the unstopped compute STEPS x COMPUTE.
//   quota_steps [COMPUTE us (default 100)] [STEPS (default 10)] [BYTES (default 8)] [REPS (default 60)]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "spin.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double compute = argc > 1 ? std::atof(argv[1]) : 100;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 10;
  const int bytes = argc > 3 ? std::atoi(argv[3]) : 8;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 60;
  if (size < 2 || size % 2 != 0 || !(compute >= 0) || steps < 1 || bytes < 1 || reps < 1) {
    if (rank == 0)
      std::fprintf(stderr,
                   "quota_steps: an even number of ranks; COMPUTE >= 0, STEPS >= 1, BYTES >= 1, REPS >= 1\n");
    MPI_Finalize();
    return 2;
  }
  const auto n = static_cast<std::size_t>(bytes);
  std::vector<char> out(n, 1), in(n);
  const int partner = rank ^ 1;
  std::vector<double> t;
  for (int r = -3; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int s = 0; s < steps; ++s) {
      probe::spin_us(compute);
      MPI_Sendrecv(out.data(), bytes, MPI_CHAR, partner, 0, in.data(), bytes, MPI_CHAR, partner, 0,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    const double mine = (MPI_Wtime() - t0) * 1e6;
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r >= 0) t.push_back(slowest);
  }
  if (rank == 0) {
    const double mean = std::accumulate(t.begin(), t.end(), 0.0) / double(t.size());
    std::sort(t.begin(), t.end());
    const auto at = [&](double q) { return t[std::size_t(q * double(t.size() - 1) + 0.5)]; };
    std::printf("%d steps of %.0f us + %d B: compute %.0f us; run median %.0f us [q1 %.0f, q3 %.0f], "
                "mean %.0f\n",
                steps, compute, bytes, compute * steps, at(0.5), at(0.25), at(0.75), mean);
  }
  MPI_Finalize();
  return 0;
}
