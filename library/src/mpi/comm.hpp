#pragma once
// Internal MPI helpers: the communicator wrapper and RAII derived datatypes.
// This folder is the only place in the library that includes <mpi.h>.
#include <mpi.h>

#include <chrono>
#include <vector>

#include "tessera/image.hpp"
#include "tessera/partition.hpp"

namespace tessera::detail {

struct Comm {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  bool owned = false;  // freed in the destructor if true (and MPI is not finalised yet)
  /// Nonblocking collectives this rank posted on `comm` and has not completed
  /// (post_barrier); complete_pending completes them, the destructor at the latest.
  mutable std::vector<MPI_Request> pending;
  Comm() = default;
  explicit Comm(MPI_Comm c, bool own = false);
  Comm(Comm&& o) noexcept;
  Comm& operator=(Comm&&) = delete;
  Comm(const Comm&) = delete;
  ~Comm();
};

/// Throws tessera::Error if an MPI call failed (MPI_ERRORS_RETURN is set on our comms).
void check(int mpi_result, const char* what);

/// An owned, committed MPI datatype.
class Datatype {
 public:
  Datatype() = default;
  explicit Datatype(MPI_Datatype t) : type_(t) {}
  Datatype(Datatype&& o) noexcept : type_(o.type_) { o.type_ = MPI_DATATYPE_NULL; }
  Datatype& operator=(Datatype&& o) noexcept;
  Datatype(const Datatype&) = delete;
  ~Datatype();
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

/// The w x h block of floats at the start of a buffer with row stride `stride`
/// (floats): a contiguous type when the rows touch (w == stride or h == 1), else a
/// vector type, as in the paper. Extent: from the first to the last float.
Datatype block_type(int width, int height, std::ptrdiff_t stride);

/// Several blocks of one buffer as one message: block i starts at float offset
/// offsets[i]. Used for SBT subtrees. All blocks share `stride`.
Datatype blocks_type(const std::vector<Box>& sizes, const std::vector<std::ptrdiff_t>& offsets,
                     std::ptrdiff_t stride);

/// Completes `request`, testing it every `interval` and sleeping in between instead of
/// spinning in MPI_Wait: a rank that waits so leaves its core (and its node's CPU quota)
/// to ranks that still compute. Local.
void wait_gently(MPI_Request& request, std::chrono::microseconds interval = std::chrono::microseconds(200));

/// A barrier over `comm`; with `sleepy`, this rank polls it with short sleeps instead
/// of spinning (wait_gently). Collective.
void gentle_barrier(const Comm& comm, bool sleepy);

/// This rank's part of a barrier over `comm`, without waiting for the others: the
/// request is kept in comm.pending. A rank that must not leave before the others have
/// reached a point (idle ranks of a plan, which wait in gentle_barrier) lets them go
/// while it goes on. Collective (every rank calls it, or gentle_barrier, in the same
/// order of `comm`'s collectives); the barrier completes no later than complete_pending.
void post_barrier(const Comm& comm);

/// Drops the collectives post_barrier left on `comm` that have completed (testing each
/// once, which also progresses them), then waits for the oldest of the others until at
/// most `keep` remain. Local.
void complete_pending(const Comm& comm, std::size_t keep = 0);

}  // namespace tessera::detail
