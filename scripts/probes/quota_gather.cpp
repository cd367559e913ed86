// Independent MPI probe for an emulated cluster of 2 nodes x 2 ranks (0, 1 on node 1;
// 2, 3 on node 2): rank 0 receives BYTES from rank 2 and BYTES from rank 3, (a) in turn
// (each sender starts on a go message), (b) at once (two Irecvs, both senders start
// after a barrier), and (c) from rank 2 alone. Prints rank 0's medians of REPS samples
// per mode, three rounds.
//   quota_gather [BYTES (default 4 MiB)] [REPS (default 15)]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int bytes = argc > 1 ? std::atoi(argv[1]) : (4 << 20);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 15;
  if (size != 4 || bytes < 1 || reps < 1) {
    if (rank == 0) std::fprintf(stderr, "quota_gather: 4 ranks; BYTES >= 1, REPS >= 1\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<char> a(std::size_t(bytes), 1), b(std::size_t(bytes), 2);
  const char* names[] = {"in turn", "at once", "single "};
  for (int round = 0; round < 3; ++round)
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        if (mode == 0) {
          for (int from = 2; from <= 3; ++from) {
            char go = 1;
            if (rank == 0) {
              MPI_Send(&go, 1, MPI_CHAR, from, 0, MPI_COMM_WORLD);
              MPI_Recv(a.data(), bytes, MPI_CHAR, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            if (rank == from) {
              MPI_Recv(&go, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
              MPI_Send(b.data(), bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
          }
        } else if (mode == 1) {
          if (rank == 0) {
            MPI_Request q[2];
            MPI_Irecv(a.data(), bytes, MPI_CHAR, 2, 1, MPI_COMM_WORLD, &q[0]);
            MPI_Irecv(b.data(), bytes, MPI_CHAR, 3, 1, MPI_COMM_WORLD, &q[1]);
            MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
          }
          if (rank >= 2) MPI_Send(b.data(), bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        } else {
          if (rank == 0) MPI_Recv(a.data(), bytes, MPI_CHAR, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          if (rank == 2) MPI_Send(b.data(), bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
        t.push_back(1e6 * (MPI_Wtime() - t0));
      }
      std::sort(t.begin(), t.end());
      if (rank == 0)
        std::printf("round %d %s: %d B each median %.0f us [%.0f-%.0f]\n", round, names[mode], bytes,
                    t[t.size() / 2], t.front(), t.back());
    }
  MPI_Finalize();
}
