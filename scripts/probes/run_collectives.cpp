// Independent MPI probe: what the collectives around every plan run cost over all the
// ranks started (no tessera code; the same MPI calls, side by side). tessera's
// Program::run broadcasts the image size and agrees on the plan (an allreduce); with a
// plan of fewer ranks than started it made its team with MPI_Comm_split and freed it, on
// every run until the fifty-first session; and the working ranks end in a barrier with
// the idle ones, who wait in it testing every 200 µs and sleeping between (so that ranks
// on a shared node leave the cores to the working ones). Times, alternated sample by
// sample after a barrier, rank 0's median of REPS (default 200, after 5 untimed) of:
//   bcast      MPI_Bcast of 3 ints from rank 0
//   allreduce  MPI_Allreduce of one int (MPI_MAX)
//   split      MPI_Comm_split of the world into ranks < P and the rest, then MPI_Comm_free
//   end-spin   ranks < P spin 1 ms, then MPI_Ibarrier + MPI_Wait; the others are waiting in
//              MPI_Ibarrier + MPI_Wait: from rank 0's end of the spin to the barrier's end
//   end-sleep  the same with the others testing every 200 µs and sleeping between
// e.g. `tessera-cluster launch --ranks-per-node 1 -- .../run_collectives` on 4 emulated nodes.
//   run_collectives [P (default 1)] [REPS (default 200)]
#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "median.hpp"
#include "spin.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int procs = argc > 1 ? std::atoi(argv[1]) : 1;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 200;
  if (procs < 1 || procs > size || reps < 1) {
    if (rank == 0) std::fprintf(stderr, "run_collectives: P in 1..%d (the ranks started), REPS >= 1\n", size);
    MPI_Finalize();
    return 2;
  }
  constexpr int kinds = 5;
  const char* names[kinds] = {"bcast", "allreduce", "split", "end-spin", "end-sleep"};
  std::array<std::vector<double>, kinds> t;
  const bool working = rank < procs;
  for (int r = -5; r < reps; ++r)
    for (int k = 0; k < kinds; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      if (k == 0) {
        int v[3] = {rank, 2, 1};
        MPI_Bcast(v, 3, MPI_INT, 0, MPI_COMM_WORLD);
      } else if (k == 1) {
        int in = rank, out = 0;
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      } else if (k == 2) {
        MPI_Comm c = MPI_COMM_NULL;
        MPI_Comm_split(MPI_COMM_WORLD, working ? 0 : MPI_UNDEFINED, rank, &c);
        if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
      } else {
        if (working) {
          probe::spin_us(1000);
          t0 = MPI_Wtime();
        }
        MPI_Request request;
        MPI_Ibarrier(MPI_COMM_WORLD, &request);
        if (working || k == 3) {
          MPI_Wait(&request, MPI_STATUS_IGNORE);
        } else {
          for (int done = 0;;) {
            MPI_Test(&request, &done, MPI_STATUS_IGNORE);
            if (done) break;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
          }
        }
      }
      if (r >= 0) t[std::size_t(k)].push_back((MPI_Wtime() - t0) * 1e6);
    }
  if (rank == 0) {
    std::printf("%d ranks, P = %d, rank 0's medians of %d:", size, procs, reps);
    for (int k = 0; k < kinds; ++k) std::printf(" %s %.1f us", names[k], probe::median(t[std::size_t(k)]));
    std::printf("\n");
  }
  MPI_Finalize();
  return 0;
}
