// tessera-fig8-check: an independent implementation of the P-3PC paper's Fig. 8, kept
// deliberately apart from tessera-bench (no shared code) so that each checks the other.
// Two ranks; for every path x layout x size, `rounds` consecutive repetitions of the
// same cell on the same buffers (no barrier between them: "one node continuously
// sends data to another"), noncontiguous data as MPI_Type_vector(100, n/100, 2n/100)
// as in the pseudocode; prints the median per cell as SPEC's CSV, full path as a total
// (roundtrip(n, 0) - t_cf, SPEC errata), so it compares with `tessera-perfdb export --csv`.
//   mpirun -n 2 tessera-fig8-check [rounds]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

const int kBlocks = 100;
const long kSizes[] = {0, 1024, 51200, 102400, 512000};  // floats: the paper's 0, 1K, 50K, 100K, 500K
enum Path { kSend, kRecv, kFull };
const char* const kPathNames[] = {"send", "recv", "full"};
const char* const kLayoutNames[] = {"cc", "cn", "nc", "nn"};

// The paper's datatype: 100 blocks of about n/100 floats, each block's slot twice the
// longest block (MPI_Type_vector when 100 divides n; the first n % 100 blocks one float
// longer otherwise, so every size carries exactly n floats); or n contiguous.
MPI_Datatype make_type(long n, bool contiguous) {
  MPI_Datatype t;
  if (contiguous || n < kBlocks) {
    MPI_Type_contiguous(int(n), MPI_FLOAT, &t);
  } else if (n % kBlocks == 0) {
    MPI_Type_vector(kBlocks, int(n / kBlocks), int(2 * n / kBlocks), MPI_FLOAT, &t);
  } else {
    const long longest = (n + kBlocks - 1) / kBlocks;
    std::vector<int> lengths(kBlocks), displs(kBlocks);
    for (int i = 0; i < kBlocks; ++i) {
      lengths[std::size_t(i)] = int(n / kBlocks + (i < n % kBlocks));
      displs[std::size_t(i)] = int(2 * longest * i);
    }
    MPI_Type_indexed(kBlocks, lengths.data(), displs.data(), MPI_FLOAT, &t);
  }
  MPI_Type_commit(&t);
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Median time in µs of one cell, measured on rank 0 (the other rank returns 0).
double time_cell(int me, Path path, long n, bool send_c, bool recv_c, int rounds, std::vector<float>& buf) {
  MPI_Datatype send_t = make_type(n, send_c), recv_t = make_type(n, recv_c);
  std::vector<double> times;
  MPI_Barrier(MPI_COMM_WORLD);  // once per cell, never inside the timed loop
  for (int i = 0; i < rounds + 2; ++i) {  // the first two are warm-up
    double t0 = 0, t1 = 0;
    if (me == 0) {
      t0 = MPI_Wtime();
      if (path == kSend) MPI_Send(buf.data(), 1, send_t, 1, 7, MPI_COMM_WORLD);
      if (path == kRecv) MPI_Recv(buf.data(), 1, recv_t, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (path == kFull) {
        MPI_Send(buf.data(), 1, send_t, 1, 7, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), 0, MPI_FLOAT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      t1 = MPI_Wtime();
      if (i >= 2) times.push_back((t1 - t0) * 1e6);
    } else {
      if (path == kSend) MPI_Recv(buf.data(), 1, recv_t, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (path == kRecv) MPI_Send(buf.data(), 1, send_t, 0, 7, MPI_COMM_WORLD);
      if (path == kFull) {
        MPI_Recv(buf.data(), 1, recv_t, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), 0, MPI_FLOAT, 0, 7, MPI_COMM_WORLD);
      }
    }
  }
  MPI_Type_free(&send_t);
  MPI_Type_free(&recv_t);
  return me == 0 ? median(times) : 0.0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
  if (size != 2 || rounds < 1) {
    if (me == 0) std::fprintf(stderr, "usage: mpirun -n 2 tessera-fig8-check [rounds >= 1]\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<float> buf(2 * 512000 + 4 * kBlocks, 1.0f);
  // t_cf = roundtrip(0, 0) / 2, so the full path's total at size 0 is t_cf itself: that
  // cell reuses this measurement rather than subtracting two noisy medians.
  const double roundtrip0 = time_cell(me, kFull, 0, true, true, rounds, buf);
  const double t_cf = roundtrip0 / 2;
  if (me == 0) std::printf("path,layout,floats,time_us\n");
  for (int p = kSend; p <= kFull; ++p)
    for (int l = 0; l < 4; ++l)
      for (long n : kSizes) {
        const bool send_c = l < 2, recv_c = l % 2 == 0;
        const bool full_cc_0 = p == kFull && l == 0 && n == 0;
        const double t = full_cc_0 ? roundtrip0 : time_cell(me, Path(p), n, send_c, recv_c, rounds, buf);
        if (me == 0)
          std::printf("%s,%s,%ld,%.3f\n", kPathNames[p], kLayoutNames[l], n, p == kFull ? t - t_cf : t);
      }
  MPI_Finalize();
  return 0;
}
