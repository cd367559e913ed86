// Independent MPI probe (no tessera code): what the receiver's cache state does to one
// message. Rank 1 sends ROWS rows of W floats, contiguous, into rows STRIDE floats apart
// on rank 0 (MPI_Type_vector; a 2x1 gather's shape: at 512^2, 512 rows of 256 floats
// into rows of 512), one message after a barrier per sample, the sender rewriting its
// rows before each (as a compute step leaves an output). Three receiver states,
// alternated sample by sample (median of 40 each, µs, rank 0's receive):
//   rewritten  rank 0 rewrote its receive span just before (its own recent writes)
//   swept      rank 0 read and wrote SWEEP MiB elsewhere first (as a larger message or
//              a long pipeline stage leaves the caches)
//   as left    nothing between samples but the previous sample (the same buffer, warm)
// On the project's VM (2026-11-29, three runs): 512 x 256 into 512, rewritten 12.3-12.8
// µs, swept 27.6-27.9, as left 13.0-13.3; the executor's 2x1 gather of a 512^2 output
// takes 13.5 µs.
//   mpirun -n 2 recv_state [ROWS W STRIDE SWEEP_MiB]   (default 512 256 512 32)
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "median.hpp"

using probe::median;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rows = argc > 1 ? std::atoi(argv[1]) : 512, width = argc > 2 ? std::atoi(argv[2]) : 256;
  const int stride = argc > 3 ? std::atoi(argv[3]) : 512, sweep_mib = argc > 4 ? std::atoi(argv[4]) : 32;
  if (size != 2 || rows < 1 || width < 1 || stride < width || sweep_mib < 1) {
    if (rank == 0) std::fprintf(stderr, "usage: mpirun -n 2 recv_state [ROWS W STRIDE>=W SWEEP_MiB]\n");
    MPI_Finalize();
    return 2;
  }
  constexpr int kSamples = 40, kUntimed = 3, kStates = 3;
  std::vector<float> from(std::size_t(rows) * width, 1.0f), to(std::size_t(rows) * stride, 0.0f);
  std::vector<float> other(std::size_t(sweep_mib) << 18, 0.0f);
  MPI_Datatype into;
  MPI_Type_vector(rows, width, stride, MPI_FLOAT, &into);
  MPI_Type_commit(&into);
  std::vector<double> times[kStates];
  for (int s = 0; s < (kSamples + kUntimed) * kStates; ++s) {
    const int state = s % kStates;
    if (rank == 1) {
      for (float& x : from) x += 1.0f;
    } else if (state == 0) {
      std::fill(to.begin(), to.end(), float(s));
    } else if (state == 1) {
      for (float& x : other) x += 1.0f;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (rank == 1)
      MPI_Send(from.data(), int(from.size()), MPI_FLOAT, 0, 0, MPI_COMM_WORLD);
    else
      MPI_Recv(to.data(), 1, into, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (s >= kUntimed * kStates) times[state].push_back((MPI_Wtime() - t0) * 1e6);
  }
  if (rank == 0)
    std::printf(
        "%d x %d floats into rows %d apart: rewritten %.1f us, swept %d MiB %.1f us, as left %.1f us\n", rows,
        width, stride, median(times[0]), sweep_mib, median(times[1]), median(times[2]));
  MPI_Type_free(&into);
  MPI_Finalize();
  return 0;
}
