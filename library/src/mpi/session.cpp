#include "tessera/session.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "comm.hpp"
#include "tessera/clock_sync.hpp"
#include "tessera/cpu_quota.hpp"
#include "tessera/error.hpp"
#include "tessera/statistics.hpp"

namespace tessera {

Session::Session(int& argc, char**& argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // Threads (TBB) compute inside a rank, but only the main thread calls MPI.
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    owns_mpi_ = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  comm_ = std::make_unique<detail::Comm>(MPI_COMM_WORLD);
  // Which world ranks share this node: a plan that leaves some of them idle can give
  // their cores to the working ones (TBB threads inside a rank).
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    int n = 1;
    MPI_Comm_size(node, &n);
    node_world_ranks_.resize(std::size_t(n));
    MPI_Allgather(&comm_->rank, 1, MPI_INT, node_world_ranks_.data(), 1, MPI_INT, node);
    MPI_Comm_free(&node);
  } else {
    node_world_ranks_ = {comm_->rank};
  }
  const int mine = int(node_world_ranks_.size());
  if (MPI_Allreduce(&mine, &ranks_per_node_, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
    ranks_per_node_ = mine;
}

int Session::threads_for(int active_procs) const {
  // The cores this process may run on: mpirun binds each rank to one core by default,
  // and then extra threads would only take turns on it.
  cpu_set_t set;
  CPU_ZERO(&set);
  const int allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  // Under a CPU quota, only as many as the quota keeps busy (quota_cores). Both are read
  // once: std::thread::hardware_concurrency() reads sysfs on every call (20 µs here), and
  // every run of a program asks (it sat inside each run's timed scatter).
  static const double quota = cpu_quota_cores();
  static const int hardware = int(std::max(1u, std::thread::hardware_concurrency()));
  const int cores = quota_cores(std::min(allowed, hardware), quota);
  const auto active = std::count_if(node_world_ranks_.begin(), node_world_ranks_.end(),
                                    [&](int r) { return r < active_procs; });
  return std::max(1, cores / int(std::max<std::ptrdiff_t>(1, active)));
}

Session::~Session() {
  teams_.clear();  // before MPI_Finalize
  comm_.reset();
  if (owns_mpi_) MPI_Finalize();
}

int Session::rank() const { return comm_->rank; }
int Session::size() const { return comm_->size; }

double Session::estimate_clock_offset(const std::function<double()>& clock, int round_trips) const {
  if (round_trips < 1) throw InvalidArgument("a clock offset needs at least one round trip");
  constexpr int kTag = 301;  // no plan's tag (theirs are 101-201), nor pair_latency_us's
  const MPI_Comm c = comm_->comm;
  std::vector<double> offsets(std::size_t(size()), 0.0);
  if (rank() == 0) {
    std::vector<ClockReading> readings(static_cast<std::size_t>(round_trips));
    for (int peer = 1; peer < size(); ++peer) {
      for (ClockReading& r : readings) {
        const char ask = 1;
        r.sent = clock();
        detail::check(MPI_Send(&ask, 1, MPI_CHAR, peer, kTag, c), "MPI_Send");
        detail::check(MPI_Recv(&r.peer, 1, MPI_DOUBLE, peer, kTag, c, MPI_STATUS_IGNORE), "MPI_Recv");
        r.received = clock();
      }
      offsets[std::size_t(peer)] = tessera::clock_offset(readings);  // the pure one
    }
  } else {
    for (int k = 0; k < round_trips; ++k) {
      char ask = 0;
      detail::check(MPI_Recv(&ask, 1, MPI_CHAR, 0, kTag, c, MPI_STATUS_IGNORE), "MPI_Recv");
      const double now = clock();
      detail::check(MPI_Send(&now, 1, MPI_DOUBLE, 0, kTag, c), "MPI_Send");
    }
  }
  double mine = 0;
  detail::check(MPI_Scatter(offsets.data(), 1, MPI_DOUBLE, &mine, 1, MPI_DOUBLE, 0, c), "MPI_Scatter");
  return mine;
}

namespace {
double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

double Session::clock_offset() const {
  if (!clock_offset_) clock_offset_ = estimate_clock_offset(steady_seconds, 30);
  return *clock_offset_;
}

double Session::synced_now() const {
  // Not estimated here: the first estimate is collective, and a read is local.
  if (!clock_offset_) throw Error("synced_now() before the collective clock_offset()");
  return steady_seconds() - *clock_offset_;
}

void Session::barrier() const { detail::check(MPI_Barrier(comm_->comm), "MPI_Barrier"); }

std::string Session::broadcast(const std::string& text) const {
  int length = int(text.size());
  detail::check(MPI_Bcast(&length, 1, MPI_INT, 0, comm_->comm), "MPI_Bcast");
  std::string out = is_root() ? text : std::string(std::size_t(length), '\0');
  detail::check(MPI_Bcast(out.data(), length, MPI_CHAR, 0, comm_->comm), "MPI_Bcast");
  return out;
}

std::vector<double> Session::gather_values(double value) const {
  std::vector<double> all(is_root() ? std::size_t(comm_->size) : 0);
  detail::check(MPI_Gather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, comm_->comm), "MPI_Gather");
  return all;
}

double Session::peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) * 1024.0;  // Linux reports kilobytes
}

void Session::agree(const std::function<void()>& step, Wait wait) const {
  std::string message;
  bool failed = false;
  // The kind travels with the message so every rank rethrows the same type.
  int kind = 0;
  try {
    step();
  } catch (const InvalidArgument& e) {
    failed = true, kind = 1, message = e.what();
  } catch (const InfeasiblePlan& e) {
    failed = true, kind = 2, message = e.what();
  } catch (const IoError& e) {
    failed = true, kind = 3, message = e.what();
  } catch (const std::exception& e) {
    failed = true, message = e.what();
  }
  const int mine = failed ? comm_->rank : comm_->size;
  int first_failed = comm_->size;
  if (wait == Wait::spin) {
    detail::check(MPI_Allreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm_->comm), "MPI_Allreduce");
  } else {
    MPI_Request request;
    detail::check(MPI_Iallreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm_->comm, &request), "MPI_Iallreduce");
    detail::wait_gently(request, std::chrono::milliseconds(2));
  }
  if (first_failed == comm_->size) return;
  int header[2] = {int(message.size()), kind};
  detail::check(MPI_Bcast(header, 2, MPI_INT, first_failed, comm_->comm), "MPI_Bcast");
  message.resize(std::size_t(header[0]));
  detail::check(MPI_Bcast(message.data(), header[0], MPI_CHAR, first_failed, comm_->comm), "MPI_Bcast");
  switch (header[1]) {
    case 1:
      throw InvalidArgument(message);
    case 2:
      throw InfeasiblePlan(message);
    case 3:
      throw IoError(message);
    default:
      throw Error(message);
  }
}

Team Session::team(int procs) const {
  if (procs < 1 || procs > comm_->size)
    throw InfeasiblePlan("a plan of " + std::to_string(procs) + " ranks needs " + std::to_string(procs) +
                         " ranks but " + std::to_string(comm_->size) + " were started");
  if (procs == comm_->size) return Team(std::make_unique<detail::Comm>(comm_->comm));
  // Splitting is collective and costs rounds of messages (a communicator id agreed by
  // all), so only when some ranks idle, and once per size: the session keeps it.
  auto kept = teams_.find(procs);
  if (kept == teams_.end()) {
    MPI_Comm sub = MPI_COMM_NULL;
    detail::check(MPI_Comm_split(comm_->comm, comm_->rank < procs ? 0 : MPI_UNDEFINED, comm_->rank, &sub),
                  "MPI_Comm_split");
    if (sub != MPI_COMM_NULL) MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
    kept = teams_.emplace(procs, std::make_unique<detail::Comm>(sub, true)).first;
  }
  if (kept->second->comm == MPI_COMM_NULL) return Team(nullptr);
  return Team(std::make_unique<detail::Comm>(kept->second->comm));  // borrowed: the session frees it
}

Team::Team(std::unique_ptr<detail::Comm> comm) : comm_(std::move(comm)) {}
Team::Team(Team&&) noexcept = default;
Team& Team::operator=(Team&&) noexcept = default;
Team::~Team() = default;
int Team::rank() const { return comm_ ? comm_->rank : 0; }
int Team::size() const { return comm_ ? comm_->size : 0; }
void Team::barrier() const { detail::check(MPI_Barrier(comm_->comm), "MPI_Barrier"); }
double Team::max(double value) const {
  double worst = value;
  detail::check(MPI_Allreduce(&value, &worst, 1, MPI_DOUBLE, MPI_MAX, comm_->comm), "MPI_Allreduce");
  return worst;
}
std::vector<double> Team::max(std::vector<double> values, Session::Wait wait) const {
  std::vector<double> worst(values.size());
  if (wait == Session::Wait::spin) {
    detail::check(MPI_Allreduce(values.data(), worst.data(), int(values.size()), MPI_DOUBLE, MPI_MAX, comm_->comm),
                  "MPI_Allreduce");
    return worst;
  }
  MPI_Request request;
  detail::check(MPI_Iallreduce(values.data(), worst.data(), int(values.size()), MPI_DOUBLE, MPI_MAX, comm_->comm,
                               &request),
                "MPI_Iallreduce");
  detail::wait_gently(request);
  return worst;
}
double Team::now() { return MPI_Wtime(); }

double Team::pair_latency_us(int round_trips) const {
  if (round_trips < 1) throw InvalidArgument("pair latency needs at least one round trip");
  constexpr int kUntimed = 10, kTag = 300;  // no plan's tag (theirs are 101-201)
  const int me = rank();
  double latency = 0;
  if (size() >= 2 && me < 2) {
    const int peer = 1 - me;
    double word = 0;
    std::vector<double> one_way;
    one_way.reserve(std::size_t(round_trips));
    for (int r = 0; r < kUntimed + round_trips; ++r) {
      const double t0 = MPI_Wtime();
      if (me == 0) {
        detail::check(MPI_Send(&word, 1, MPI_DOUBLE, peer, kTag, comm_->comm), "MPI_Send");
        detail::check(MPI_Recv(&word, 1, MPI_DOUBLE, peer, kTag, comm_->comm, MPI_STATUS_IGNORE), "MPI_Recv");
      } else {
        detail::check(MPI_Recv(&word, 1, MPI_DOUBLE, peer, kTag, comm_->comm, MPI_STATUS_IGNORE), "MPI_Recv");
        detail::check(MPI_Send(&word, 1, MPI_DOUBLE, peer, kTag, comm_->comm), "MPI_Send");
      }
      if (r >= kUntimed) one_way.push_back((MPI_Wtime() - t0) * 1e6 / 2);
    }
    latency = stats::median(one_way);
  }
  // Rank 0's reading on every member.
  detail::check(MPI_Bcast(&latency, 1, MPI_DOUBLE, 0, comm_->comm), "MPI_Bcast");
  return latency;
}

bool wait_for_quiet_state(const Team& team, LatencyWatch& watch) {
  bool slow = false;
  while ((slow = watch.read(team.pair_latency_us())) && watch.may_wait()) {
    const double t0 = Team::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    watch.waited(team.max(Team::now() - t0));
  }
  return slow;
}

bool latency_shows_state_on_every_member(const Team& team, int ranks_per_node, double cpu_quota_cores) {
  const bool mine = latency_shows_state(ranks_per_node, int(std::thread::hardware_concurrency()), cpu_quota_cores);
  return team.max(mine ? 0.0 : 1.0) == 0.0;
}

std::array<int, 2> mpi_dims_create(int procs) {
  int dims[2] = {0, 0};
  detail::check(MPI_Dims_create(procs, 2, dims), "MPI_Dims_create");
  return {dims[0], dims[1]};
}

}  // namespace tessera
