// Independent MPI probe (no tessera code), 2 ranks, for SECONDS seconds: per ~0.25 s window on rank 0, the
// median of (a) a 4 MiB copy (L3-resident normally), us; (b) a noncontiguous message (1024 rows x 512 floats,
// MPI_Type_vector both sides, rank 1 -> rank 0), us; (c) a 32 MiB copy, GB/s.
//   mpirun -n 2 l3w [SECONDS (default 10)]
#include <mpi.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[v.size() / 2]; }
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int secs = argc > 1 ? atoi(argv[1]) : 10;
  std::vector<float> a(1 << 20, 1.f), b(1 << 20);            // 4 MiB each
  std::vector<float> big(8 << 20, 1.f), big2(8 << 20);     // 32 MiB each
  std::vector<float> tile(1024 * 520, 2.f), img(1024 * 1024);
  MPI_Datatype src, dst;
  MPI_Type_vector(1024, 512, 520, MPI_FLOAT, &src); MPI_Type_commit(&src);
  MPI_Type_vector(1024, 512, 1024, MPI_FLOAT, &dst); MPI_Type_commit(&dst);
  double t_end = MPI_Wtime() + secs;
  int win = 0;
  while (true) {
    int go = MPI_Wtime() < t_end; MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD); if (!go) break;
    std::vector<double> c4, msg; double gbs = 0;
    double w_end = MPI_Wtime() + 0.25;
    while (true) {
      int more = MPI_Wtime() < w_end; MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD); if (!more) break;
      if (rank == 0) { double t0 = MPI_Wtime(); std::memcpy(b.data(), a.data(), 4 << 20); a[7]++; c4.push_back(1e6 * (MPI_Wtime() - t0)); }
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      if (rank == 1) { tile[3]++; MPI_Send(tile.data(), 1, src, 0, 0, MPI_COMM_WORLD); }
      else MPI_Recv(img.data(), 1, dst, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (rank == 0) msg.push_back(1e6 * (MPI_Wtime() - t0));
    }
    if (rank == 0) { double t0 = MPI_Wtime(); std::memcpy(big2.data(), big.data(), 32 << 20); big[5]++; gbs = 64.0 * 1.048576e6 / (1e9 * (MPI_Wtime() - t0)) * 1e3 / 1e3; 
      printf("%3d copy4MiB %6.0f us  ncw %6.0f us  copy32MiB %5.1f GB/s\n", win, med(c4), med(msg), 2 * 32 * 1.048576e6 / 1e9 / (64.0 * 1.048576e6 / 1e9 / gbs)); fflush(stdout); }
    ++win;
  }
  MPI_Finalize();
}
