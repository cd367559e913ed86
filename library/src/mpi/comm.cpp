#include "comm.hpp"

#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "tessera/error.hpp"

namespace tessera::detail {

Comm::Comm(MPI_Comm c, bool own) : comm(c), owned(own) {
  if (comm != MPI_COMM_NULL) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
  }
}

Comm::Comm(Comm&& o) noexcept
    : comm(o.comm), rank(o.rank), size(o.size), owned(o.owned), pending(std::move(o.pending)) {
  o.comm = MPI_COMM_NULL;
  o.owned = false;
  o.pending.clear();
}

Comm::~Comm() {
  // A harness that owns MPI may have finalised it, and with it every communicator,
  // before an owner of one (a Session's kept teams) ends: nothing left to free then.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (!pending.empty()) MPI_Waitall(int(pending.size()), pending.data(), MPI_STATUSES_IGNORE);
  if (owned && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

void check(int mpi_result, const char* what) {
  if (mpi_result == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(mpi_result, text, &len);
  throw Error(std::string(what) + " failed: " + std::string(text, std::size_t(len)));
}

Datatype& Datatype::operator=(Datatype&& o) noexcept {
  std::swap(type_, o.type_);
  return *this;
}

Datatype::~Datatype() {
  if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
}

Datatype block_type(int width, int height, std::ptrdiff_t stride) {
  MPI_Datatype t;
  if (width == stride || height == 1)
    check(MPI_Type_contiguous(width * height, MPI_FLOAT, &t), "MPI_Type_contiguous");
  else
    check(MPI_Type_vector(height, width, int(stride), MPI_FLOAT, &t), "MPI_Type_vector");
  check(MPI_Type_commit(&t), "MPI_Type_commit");
  return Datatype(t);
}

Datatype blocks_type(const std::vector<Box>& sizes, const std::vector<std::ptrdiff_t>& offsets,
                     std::ptrdiff_t stride) {
  std::vector<Datatype> parts;
  std::vector<MPI_Datatype> types;
  std::vector<int> lengths;
  std::vector<MPI_Aint> displacements;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i].empty()) continue;
    parts.push_back(block_type(sizes[i].width, sizes[i].height, stride));
    types.push_back(parts.back().get());
    lengths.push_back(1);
    displacements.push_back(MPI_Aint(offsets[i]) * MPI_Aint(sizeof(float)));
  }
  MPI_Datatype t;
  check(MPI_Type_create_struct(int(types.size()), lengths.data(), displacements.data(), types.data(), &t),
        "MPI_Type_create_struct");
  check(MPI_Type_commit(&t), "MPI_Type_commit");
  return Datatype(t);
}

void wait_gently(MPI_Request& request, std::chrono::microseconds interval) {
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(interval);
  }
}

void gentle_barrier(const Comm& c, bool sleepy) {
  MPI_Request request;
  check(MPI_Ibarrier(c.comm, &request), "MPI_Ibarrier");
  if (sleepy)
    wait_gently(request);
  else
    check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
}

void post_barrier(const Comm& c) {
  MPI_Request request;
  check(MPI_Ibarrier(c.comm, &request), "MPI_Ibarrier");
  c.pending.push_back(request);
}

void complete_pending(const Comm& c, std::size_t keep) {
  auto& pending = c.pending;
  for (auto it = pending.begin(); it != pending.end();) {
    int done = 0;
    check(MPI_Test(&*it, &done, MPI_STATUS_IGNORE), "MPI_Test");
    it = done ? pending.erase(it) : it + 1;
  }
  if (pending.size() <= keep) return;
  // The oldest beyond `keep`: gone from `c` whether or not the wait reports an error.
  std::vector<MPI_Request> oldest(pending.begin(), pending.end() - std::ptrdiff_t(keep));
  pending.erase(pending.begin(), pending.end() - std::ptrdiff_t(keep));
  check(MPI_Waitall(int(oldest.size()), oldest.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

}  // namespace tessera::detail
