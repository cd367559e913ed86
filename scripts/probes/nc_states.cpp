// Independent MPI probe (no tessera code): the state tessera-bench's per-visit probe
// reads, as plain MPI reads it. For SECONDS seconds, alternately: a round trip of a
// noncontiguous FLOATS-float message (default 1024 = 4 KiB: MPI_Type_indexed of 100
// blocks, each slot twice the longest block, as the paper's layout; rank 0 -> rank 1, an
// empty reply) and an 8-byte round trip; per 0.5 s window the median of each (the
// noncontiguous one as a round trip, the latency halved), µs, then the windows' spread.
// On the forty-eighth session's VM (2026-12-03) a 4 KiB round trip read ~1.6-2.5 µs for
// whole launches, 5.8-8.4 µs (latency 0.38-0.42) for others, and flipped from one to the
// other within a launch: a state of the host, not of tessera-bench.
//   mpirun -n 2 nc_states [SECONDS (default 10)] [FLOATS (default 1024, >= 100)]
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
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
  const long floats = argc > 2 ? std::atol(argv[2]) : 1024;
  if (size != 2 || !(seconds > 0) || floats < 100 || floats > 1 << 24) {
    if (rank == 0) std::fprintf(stderr, "usage: mpirun -n 2 nc_states [SECONDS > 0] [FLOATS 100..2^24]\n");
    MPI_Finalize();
    return 2;
  }
  const int blocks = 100;
  const int longest = int((floats + blocks - 1) / blocks);
  std::vector<int> lengths(blocks), displs(blocks);
  for (int i = 0; i < blocks; ++i) {
    lengths[std::size_t(i)] = int(floats / blocks + (i < floats % blocks));
    displs[std::size_t(i)] = 2 * longest * i;
  }
  MPI_Datatype type;
  MPI_Type_indexed(blocks, lengths.data(), displs.data(), MPI_FLOAT, &type);
  MPI_Type_commit(&type);
  std::vector<float> buf(std::size_t(2 * longest * blocks), 1.0f);
  double word = 0;
  std::vector<double> nc, latency, nc_windows, latency_windows;
  if (rank == 0) std::printf("window_s  nc_roundtrip_us  latency_us\n");
  const double start = MPI_Wtime();
  for (int window = 0;;) {
    int go = MPI_Wtime() - start < seconds ? 1 : 0;
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!go) break;
    for (int i = 0; i < 10; ++i) {  // the first of each ten untimed
      double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buf.data(), 1, type, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(nullptr, 0, MPI_FLOAT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf.data(), 1, type, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(nullptr, 0, MPI_FLOAT, 0, 1, MPI_COMM_WORLD);
      }
      if (i > 0) nc.push_back((MPI_Wtime() - t0) * 1e6);
      t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(&word, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
        MPI_Recv(&word, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&word, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&word, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
      }
      if (i > 0) latency.push_back((MPI_Wtime() - t0) * 1e6 / 2);
    }
    if (rank == 0 && MPI_Wtime() - start >= 0.5 * (window + 1)) {
      nc_windows.push_back(median(nc));
      latency_windows.push_back(median(latency));
      std::printf("%8.1f  %15.2f  %10.3f\n", 0.5 * window, nc_windows.back(), latency_windows.back());
      nc.clear();
      latency.clear();
      ++window;
    }
  }
  if (rank == 0 && !nc_windows.empty()) {
    const auto [lo, hi] = std::minmax_element(nc_windows.begin(), nc_windows.end());
    std::printf("windows %zu: nc round trip median %.2f us [%.2f-%.2f], latency median %.3f us\n", nc_windows.size(),
                median(nc_windows), *lo, *hi, median(latency_windows));
  }
  MPI_Type_free(&type);
  MPI_Finalize();
  return 0;
}
