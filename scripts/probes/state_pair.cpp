// Independent MPI probe (no tessera code): the machine's state as two ranks read it, once
// per window of ~0.35 s for SECONDS seconds: the one-way latency (median of 200 8-byte
// round trips, halved) and the one-way time of a noncontiguous 512 KiB message (512 rows
// of 256 floats at a stride of 512 both sides, rank 1 -> rank 0, each after a barrier;
// median of 20), µs. The message goes through Open MPI's pipelined copy-in/copy-out, which
// needs both vCPUs: on the project's VM the two read 0.10-0.13 and 19-21 µs in the quiet
// state, 0.35-0.38 and 85-100 µs in the slow one (2026-11-29, for minutes at a time), while
// contiguous (single-copy) messages do not change. tessera-bench and tessera-validate read
// the latency alone (Team::pair_latency_us) and wait for the quiet state.
//   mpirun -n 2 state_pair [SECONDS (default 5)]
#include <mpi.h>

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
  const double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
  if (size != 2 || !(seconds > 0)) {
    if (rank == 0) std::fprintf(stderr, "usage: mpirun -n 2 state_pair [SECONDS > 0]\n");
    MPI_Finalize();
    return 2;
  }
  constexpr int kRows = 512, kRowFloats = 256, kStride = 512, kTrips = 200, kMessages = 20, kUntimed = 2;
  std::vector<float> from(std::size_t(kRows) * kStride, 1.0f), to(std::size_t(kRows) * kStride, 0.0f);
  MPI_Datatype rows;
  MPI_Type_vector(kRows, kRowFloats, kStride, MPI_FLOAT, &rows);
  MPI_Type_commit(&rows);
  const double end = MPI_Wtime() + seconds;
  double word = 0;
  if (rank == 0) std::printf("window  latency_us  noncontiguous_512KiB_us\n");
  for (int window = 0;; ++window) {
    int go = MPI_Wtime() < end;
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!go) break;
    std::vector<double> latency, message;
    for (int t = 0; t < kTrips + 10; ++t) {
      const double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(&word, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&word, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&word, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&word, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
      }
      if (t >= 10) latency.push_back((MPI_Wtime() - t0) * 1e6 / 2);
    }
    for (int m = 0; m < kMessages + kUntimed; ++m) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (rank == 1) {
        from[std::size_t(m)] += 1.0f;
        MPI_Send(from.data(), 1, rows, 0, 1, MPI_COMM_WORLD);
      } else {
        MPI_Recv(to.data(), 1, rows, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      if (m >= kUntimed) message.push_back((MPI_Wtime() - t0) * 1e6);
    }
    if (rank == 0) {
      std::printf("%6d  %10.3f  %23.1f\n", window, median(latency), median(message));
      std::fflush(stdout);
    }
    const double pause = MPI_Wtime();
    while (MPI_Wtime() - pause < 0.15) {
    }
  }
  MPI_Type_free(&rows);
  MPI_Finalize();
  return 0;
}
