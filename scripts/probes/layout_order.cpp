// Independent MPI probe (no tessera code): does a contiguous message cost more right
// after a noncontiguous one? Rank 1 sends to rank 0, one message per sample after a
// barrier, both ranks having rewritten both of their buffers' spans first (as
// tessera-bench's library-shaped samples do). Cells: contiguous 256 KiB and 1 MiB, and
// noncontiguous ones of the same sizes (MPI_Type_vector, rows of 256 floats 1024 apart,
// both sides), 60 samples each in one random order; each sample is filed by the layout
// of the sample before it. Prints rank 0's median receive per (cell, predecessor), µs.
// On the project's Intel VM (2026-12-02, three runs): contiguous 256 KiB 26-31 us after
// a contiguous message, 37-40 after a noncontiguous one; 1 MiB 103-117 against 119-125
// (benchmarker/README.md, "Cells grouped by layout: tried ..., not adopted").
//   mpirun -n 2 layout_order [SAMPLES (60)]
#include <mpi.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "median.hpp"

namespace {

using probe::median;

struct Cell {
  long floats;
  int rows;    // noncontiguous: `rows` rows of floats / rows floats each, ...
  int stride;  // ... `stride` floats apart; 0: contiguous
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int samples = argc > 1 ? std::atoi(argv[1]) : 60;
  if (size != 2 || samples < 3) {
    if (rank == 0) std::fprintf(stderr, "usage: mpirun -n 2 layout_order [SAMPLES >= 3]\n");
    MPI_Finalize();
    return 2;
  }
  const std::vector<Cell> cells{{65536, 1, 0}, {262144, 1, 0}, {65536, 256, 1024}, {262144, 1024, 1024}};
  const long most = 1L << 22;  // floats: 16 MiB, one mapping per buffer
  auto map = [&] {
    const std::size_t bytes = std::size_t(most) * sizeof(float);
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) MPI_Abort(MPI_COMM_WORLD, 1);
    return static_cast<float*>(p);
  };
  float* send = map();
  float* recv = map();
  std::vector<MPI_Datatype> types(cells.size(), MPI_FLOAT);
  for (std::size_t i = 0; i < cells.size(); ++i)
    if (cells[i].stride > 0) {
      const int width = int(cells[i].floats / cells[i].rows);
      MPI_Type_vector(cells[i].rows, width, cells[i].stride, MPI_FLOAT, &types[i]);
      MPI_Type_commit(&types[i]);
    }
  std::vector<int> order;
  for (int s = 0; s < samples; ++s)
    for (int i = 0; i < int(cells.size()); ++i) order.push_back(i);
  std::mt19937 rng(11);
  std::shuffle(order.begin(), order.end(), rng);
  std::map<std::pair<int, bool>, std::vector<double>> times;  // (cell, after noncontiguous)
  int before = -1;
  for (int i : order) {
    const Cell& c = cells[std::size_t(i)];
    const long extent = c.stride > 0 ? long(c.rows) * c.stride : c.floats;
    std::fill_n(send, extent, float(extent & 7));
    std::fill_n(recv, extent, 0.0f);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    const int count = c.stride > 0 ? 1 : int(c.floats);
    if (rank == 0)
      MPI_Recv(recv, count, types[std::size_t(i)], 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
      MPI_Send(send, count, types[std::size_t(i)], 0, 0, MPI_COMM_WORLD);
    const double us = (MPI_Wtime() - t0) * 1e6;
    if (before >= 0) times[{i, cells[std::size_t(before)].stride > 0}].push_back(us);
    before = i;
  }
  if (rank == 0)
    for (const auto& [key, v] : times) {
      const Cell& c = cells[std::size_t(key.first)];
      std::printf("%s %5ld KiB after a %s message: %7.1f us (median of %zu)\n",
                  c.stride > 0 ? "noncontiguous" : "contiguous   ", c.floats / 256,
                  key.second ? "noncontiguous" : "contiguous   ", median(v), v.size());
    }
  for (MPI_Datatype& t : types)
    if (t != MPI_FLOAT) MPI_Type_free(&t);
  MPI_Finalize();
  return 0;
}
