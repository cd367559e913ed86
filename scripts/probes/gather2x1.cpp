// Independent MPI probe (no tessera code): the two-rank 2x1 gather at 1024², as the
// library's oft/sbt gather moves it. Rank 1 sends five 512 x 1024 blocks (rows of a
// haloed tile, stride 520 floats) to rank 0, which receives each into the right half of
// a 1024² image; MPI_Type_vector on both sides. Prints rank 0's median of 20 timed
// repetitions (after one untimed), µs, with min and max. A quiet period of the
// project's VM reads 1.4–1.8 ms a launch; a disturbed one 4.8–5.7 ms for whole launches.
//   mpirun -n 2 gather2x1
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
    if (rank == 0) std::fprintf(stderr, "gather2x1: run with exactly 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  const int rows = 1024, w = 512, tile_stride = 520, image_stride = 1024;
  MPI_Datatype src, dst;
  MPI_Type_vector(rows, w, tile_stride, MPI_FLOAT, &src);
  MPI_Type_commit(&src);
  MPI_Type_vector(rows, w, image_stride, MPI_FLOAT, &dst);
  MPI_Type_commit(&dst);
  std::vector<std::vector<float>> tiles(5, std::vector<float>(std::size_t(rows + 8) * tile_stride, 1.f));
  std::vector<std::vector<float>> images(5, std::vector<float>(std::size_t(rows) * image_stride, 0.f));
  std::vector<double> t;
  for (int r = 0; r < 21; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int k = 0; k < 5; ++k) {
      if (rank == 1)
        MPI_Send(tiles[k].data() + 4 * tile_stride + 4, 1, src, 0, k, MPI_COMM_WORLD);
      else
        MPI_Recv(images[k].data() + w, 1, dst, 1, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (r > 0) t.push_back(1e6 * (MPI_Wtime() - t0));
  }
  std::sort(t.begin(), t.end());
  if (rank == 0) std::printf("median %.0f us [%.0f-%.0f]\n", t[t.size() / 2], t.front(), t.back());
  MPI_Type_free(&src);
  MPI_Type_free(&dst);
  MPI_Finalize();
}
