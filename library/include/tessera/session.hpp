#pragma once
// The MPI session: start-up and shutdown in one RAII object, and the collective
// agreement that lets one rank's error end every rank cleanly.
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

namespace detail {
struct Comm;  // wraps an MPI communicator; defined in src/mpi
}

/// Owns MPI for the program's lifetime (MPI_Init in the constructor, MPI_Finalize in
/// the destructor; if MPI was already initialised, e.g. by a test harness, it is
/// left to its owner). Rank 0 is the root that reads and
/// writes whole images.
class Session {
 public:
  /// Collective over all launched processes.
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const;
  int size() const;
  /// Compute threads a rank uses when world ranks 0..active_procs-1 work: this node's
  /// cores divided by the working ranks on it, at least 1 and at most the cores the
  /// process is bound to (run mpirun with --bind-to none to let ranks use the cores
  /// a plan leaves free; scripts/env.sh does). Local.
  int threads_for(int active_procs) const;
  bool is_root() const { return rank() == 0; }

  /// How a rank waits for the others in agree(): `spin` is MPI's own blocking wait
  /// (lowest latency; Open MPI busy-polls a core), `sleep` tests every 2 ms and sleeps
  /// in between, so ranks idling while others are being timed leave the cores alone.
  enum class Wait { spin, sleep };

  /// Runs `step` on every rank, then agrees collectively whether it succeeded
  /// everywhere. If it threw on any rank, every rank throws tessera::Error with the
  /// message of the lowest failing rank, so all ranks stop together without hanging
  /// in a later collective. Collective.
  void agree(const std::function<void()>& step, Wait wait = Wait::spin) const;

  /// Barrier. Collective.
  void barrier() const;

  /// The root's `text` on every rank. Collective.
  std::string broadcast(const std::string& text) const;

  /// Every rank's `value`, in rank order, on the root (empty elsewhere). Collective.
  std::vector<double> gather_values(double value) const;

  /// Peak resident set size of this process so far, in bytes. Local.
  static double peak_rss_bytes();

  /// The communicator (for the library's own use).
  const detail::Comm& comm() const { return *comm_; }

 private:
  std::unique_ptr<detail::Comm> comm_;
  std::vector<int> node_world_ranks_;  // world ranks on this rank's node
  bool owns_mpi_ = false;
};

}  // namespace tessera
