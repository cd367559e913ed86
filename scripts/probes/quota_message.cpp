// Independent MPI probe for an emulated cluster under a CPU quota, one rank per node: rank
// 0 sends BYTES to rank 1 (the next node), which answers 8 bytes; REPS times, each after
// a barrier, SLEEP µs of sleep (a rank that waited, letting the quota refill) and a
// barrier. Prints rank 0's median and quartiles of the round trip: what tessera-bench's
// inter-node P-3PC cells of that size should repeat.
//   quota_message [BYTES (default 2 MiB)] [REPS (default 41)] [SLEEP (µs, default 1000)]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int bytes = argc > 1 ? std::atoi(argv[1]) : (2 << 20);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 41;
  const int sleep_us = argc > 3 ? std::atoi(argv[3]) : 1000;
  if (size < 2 || bytes < 1 || reps < 4 || sleep_us < 0) {
    if (rank == 0) std::fprintf(stderr, "quota_message: 2+ ranks; BYTES >= 1, REPS >= 4, SLEEP >= 0\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<char> buf(std::size_t(bytes), 1);
  char ack[8] = {0};
  std::vector<double> t;
  for (int r = -3; r < reps; ++r) {  // three untimed first
    MPI_Barrier(MPI_COMM_WORLD);
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(buf.data(), bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(ack, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf.data(), bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(ack, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    }
    if (r >= 0) t.push_back((MPI_Wtime() - t0) * 1e6);
  }
  if (rank == 0) {
    std::sort(t.begin(), t.end());
    std::printf("%d B round trip after %d us of sleep: median %.0f us [q1 %.0f, q3 %.0f] of %d\n", bytes,
                sleep_us, t[t.size() / 2], t[t.size() / 4], t[3 * t.size() / 4], reps);
  }
  MPI_Finalize();
  return 0;
}
