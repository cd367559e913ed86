// Independent MPI probe (no tessera code): the two-rank border exchange of a 2048² image
// cut in two columns (2x1), as the library's nonblocking exchange moves it: each rank
// holds a 1024 x 2048 tile with a halo of H columns (row stride 1024 + 2H floats) and
// sends its H edge columns to the other (MPI_Type_vector on both sides, Irecv, Isend,
// Waitall). The message's time depends on what the tile's rows went through before:
//   fresh: the whole tile rewritten just before (as tessera-bench's library-shaped cells)
//   idle:  rewritten, then IDLE µs of spinning (a pipeline's copy of the tile takes
//          ~0.5-0.7 ms at 2048² before its exchange)
//   swept: rewritten, then a 32 MiB buffer written (other data through the caches)
// Each state: 30 timed repetitions after 3 untimed, states in turn; prints rank 0's
// median [min-max] of the exchange (post to wait's end), µs.
//   mpirun -n 2 exchange_state [H (default 4)] [IDLE µs (default 700)]
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
  const int halo = argc > 1 ? std::atoi(argv[1]) : 4;
  const double idle_us = argc > 2 ? std::atof(argv[2]) : 700.0;
  if (size != 2 || halo < 1 || halo > 256 || idle_us < 0) {
    if (rank == 0) std::fprintf(stderr, "usage: mpirun -n 2 exchange_state [H 1..256] [IDLE_US >= 0]\n");
    MPI_Finalize();
    return 2;
  }
  const int width = 1024, height = 2048, stride = width + 2 * halo;
  std::vector<float> tile(std::size_t(stride) * height, 1.0f);
  std::vector<float> sweep(std::size_t(8) << 20, 0.0f);  // 32 MiB
  MPI_Datatype cols;
  MPI_Type_vector(height, halo, stride, MPI_FLOAT, &cols);
  MPI_Type_commit(&cols);
  // Rank 0 (left) sends its rightmost interior columns and receives into its right halo;
  // rank 1 (right) sends its leftmost interior columns and receives into its left halo.
  float* send = rank == 0 ? tile.data() + width : tile.data() + halo;
  float* recv = rank == 0 ? tile.data() + halo + width : tile.data();
  const int peer = 1 - rank;
  const char* names[3] = {"fresh", "idle", "swept"};
  std::vector<double> times[3];
  for (int rep = 0; rep < 33; ++rep)
    for (int state = 0; state < 3; ++state) {
      std::fill(tile.begin(), tile.end(), float(rep + state));
      if (state == 1) {
        const double until = MPI_Wtime() + idle_us * 1e-6;
        while (MPI_Wtime() < until) {
        }
      }
      if (state == 2) std::fill(sweep.begin(), sweep.end(), float(rep));
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Request req[2];
      MPI_Irecv(recv, 1, cols, peer, 7, MPI_COMM_WORLD, &req[0]);
      MPI_Isend(send, 1, cols, peer, 7, MPI_COMM_WORLD, &req[1]);
      MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
      const double t1 = MPI_Wtime();
      if (rep >= 3) times[state].push_back((t1 - t0) * 1e6);
    }
  if (rank == 0)
    for (int state = 0; state < 3; ++state)
      std::printf("%-5s halo %d: median %.1f us [%.1f-%.1f]\n", names[state], halo, median(times[state]),
                  *std::min_element(times[state].begin(), times[state].end()),
                  *std::max_element(times[state].begin(), times[state].end()));
  MPI_Type_free(&cols);
  MPI_Finalize();
  return 0;
}
