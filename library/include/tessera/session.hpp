#pragma once
// The MPI session: start-up and shutdown in one RAII object, and the collective
// agreement that lets one rank's error end every rank cleanly.
#include <array>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/latency_watch.hpp"

namespace tessera {

namespace detail {
struct Comm;  // wraps an MPI communicator; defined in src/mpi
}

class Team;

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
  /// a plan leaves free; scripts/env.sh does); under a CPU quota, of the cores it keeps
  /// busy (tessera::quota_cores: ceil(quota)). Local.
  int threads_for(int active_procs) const;
  /// The most ranks of this job that share a node (mpirun fills nodes in blocks): the
  /// placement a plan for this job should be priced with. Local (found at construction).
  int ranks_per_node() const { return ranks_per_node_; }
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

  /// `clock` (seconds) read on this rank minus read on the root, by Cristian's method:
  /// `round_trips` round trips with the root, each rank in turn, the shortest trusted
  /// (tessera::clock_offset). 0 on the root. Collective. Throws InvalidArgument if
  /// round_trips < 1.
  double estimate_clock_offset(const std::function<double()>& clock, int round_trips) const;
  /// This rank's steady clock (std::chrono::steady_clock) minus the root's, seconds:
  /// estimate_clock_offset with 30 round trips at the first call, kept for the session.
  /// Collective at the first call (every rank must make it at the same point of the
  /// program), local after. The clocks of one host are one clock (the estimate is then 0
  /// within a round trip); across hosts the kept value does not follow their drift (parts
  /// per million).
  double clock_offset() const;
  /// The root's steady clock, in seconds, read on this rank: the steady clock minus
  /// clock_offset(). Local; throws tessera::Error before the first clock_offset().
  double synced_now() const;

  /// The ranks 0..procs-1 that run a plan of `procs` ranks; the others get an inactive
  /// Team and idle. Throws InfeasiblePlan if procs exceeds the ranks started. When some
  /// ranks idle, the first call for a `procs` splits the world (collective over all ranks:
  /// every rank must make it at the same point of the program) and the session keeps the
  /// communicator; later calls for it are local. Every plan run asks for its team: split
  /// and freed each time, it cost a run 0.47-0.66 ms on the emulated 4 x 1 cluster at
  /// 0.45 CPU (scripts/probes/run_collectives), which no model priced.
  Team team(int procs) const;

  /// The communicator (for the library's own use).
  const detail::Comm& comm() const { return *comm_; }

 private:
  std::unique_ptr<detail::Comm> comm_;
  std::vector<int> node_world_ranks_;  // world ranks on this rank's node
  int ranks_per_node_ = 1;
  bool owns_mpi_ = false;
  mutable std::optional<double> clock_offset_;
  /// The teams of fewer ranks than started, by size, split at their first team() call and
  /// freed with the session (a null communicator on the ranks that idle).
  mutable std::map<int, std::unique_ptr<detail::Comm>> teams_;
};

/// Reads `team`'s pair latency (Team::pair_latency_us) into `watch` and, while it reads
/// slow and the watch's wait budget lasts, sleeps 100 ms on every member and reads again
/// (the time counted as the slowest member's); true if the last reading was slow (the
/// budget ran out in the slow state). Collective over the team: every member reads rank
/// 0's value, so all wait alike.
bool wait_for_quiet_state(const Team& team, LatencyWatch& watch);

/// latency_shows_state with this process's hardware threads, `ranks_per_node` (the
/// caller's Session::ranks_per_node) and `cpu_quota_cores`, agreed over `team`: true only
/// if it holds on every member, so that every member waits alike or none does.
/// Collective over the team.
bool latency_shows_state_on_every_member(const Team& team, int ranks_per_node, double cpu_quota_cores);

/// MPI_Dims_create(procs, 2): MPI's own balanced 2-D factorisation {d0, d1}, d0 >= d1.
/// Local (needs MPI initialised).
std::array<int, 2> mpi_dims_create(int procs);

/// The ranks that run one plan, as one communicator: what the distributed image's
/// scatter, exchange and gather run on. Move-only; the communicator of a team of fewer
/// ranks than started belongs to the Session (Session::team), the world's to MPI.
class Team {
 public:
  Team(Team&&) noexcept;
  Team& operator=(Team&&) noexcept;
  ~Team();
  /// True on the ranks that take part (world ranks < procs).
  bool active() const { return comm_ != nullptr; }
  /// Rank within the team and team size (both 0 when inactive). Local.
  int rank() const;
  int size() const;
  /// Barrier over the team. Collective over the team.
  void barrier() const;
  /// The largest `value` over the team, on every member. Collective over the team.
  double max(double value) const;
  /// The element-wise largest of `values` over the team (the same length on every
  /// member), on every member. With Session::Wait::sleep a member that arrives early
  /// polls the reduction with short sleeps instead of spinning in it, so that it leaves
  /// its core (and its node's CPU quota) to members still at work; the members then
  /// leave it up to ~0.2 ms apart. Collective over the team.
  std::vector<double> max(std::vector<double> values, Session::Wait wait = Session::Wait::spin) const;
  /// Wall-clock time in seconds (MPI_Wtime). Local.
  static double now();
  /// One-way latency between the team's ranks 0 and 1, µs: the median of `round_trips`
  /// 8-byte round trips (after a few untimed ones), halved; 0 on a team of one. A probe of
  /// the machine's state, not of a plan: on this project's VM two ranks on one node read
  /// 0.14-0.18 µs, or 0.37-0.47 µs in stretches of seconds to a minute in which the host
  /// holds the two vCPUs further apart (every pipelined transfer between them then costs
  /// 3-4x). Collective over the team; the same value on every member. Throws
  /// InvalidArgument if round_trips < 1.
  double pair_latency_us(int round_trips = 200) const;
  /// The communicator (for the library's own use).
  const detail::Comm& comm() const { return *comm_; }

 private:
  friend class Session;
  explicit Team(std::unique_ptr<detail::Comm> comm);
  std::unique_ptr<detail::Comm> comm_;
};

}  // namespace tessera
