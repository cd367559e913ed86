#include "driver.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <map>
#include <set>

namespace tessera::bench {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_signal(int) { g_interrupted = 1; }

}  // namespace

bool interrupted() { return g_interrupted != 0; }

void install_interrupt_handler() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

Topology discover_topology(MPI_Comm world) {
  Topology t;
  MPI_Comm_rank(world, &t.rank);
  MPI_Comm_size(world, &t.size);
  MPI_Comm node;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, t.rank, MPI_INFO_NULL, &node);
  int leader = t.rank;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  std::vector<int> leaders(std::size_t(t.size));
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, world);
  std::map<int, int> index;  // leader rank -> node index, ordered by leader
  for (int l : leaders) index.emplace(l, 0);
  int i = 0;
  for (auto& [l, idx] : index) idx = i++;
  t.nodes = i;
  std::vector<int> count(std::size_t(t.nodes));
  for (int l : leaders) {
    t.node_of_rank.push_back(index[l]);
    ++count[std::size_t(index[l])];
  }
  t.ranks_per_node = *std::max_element(count.begin(), count.end());

  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(std::size_t(t.size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, world);
  for (int r = 0; r < t.size; ++r)
    t.host_of_rank.emplace_back(all.data() + std::size_t(r) * MPI_MAX_PROCESSOR_NAME);
  return t;
}

std::pair<std::string, std::string> mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, std::size_t(len));
  s = s.substr(0, s.find_first_of(",\n"));
  // "Open MPI v4.1.4" -> ("Open MPI", "4.1.4")
  const auto v = s.rfind(" v");
  if (v == std::string::npos) return {s, ""};
  return {s.substr(0, v), s.substr(v + 2)};
}

PairComm::PairComm(const RankPair& p) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const bool member = rank == p.a || rank == p.b;
  MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, rank == p.a ? 0 : 1, &comm_);
  if (member) MPI_Comm_set_errhandler(comm_, MPI_ERRORS_ARE_FATAL);
}

PairComm::~PairComm() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

int run_rounds(MPI_Comm pair, RoundScheduler& sched, std::vector<Job>& table, Clock::time_point start,
                const TimeRule& rule, const std::function<void()>& hook,
                const std::function<double(const Job&)>& sample,
                const std::function<void(double)>& progress, const std::function<void()>& settle) {
  int me = 0;
  MPI_Comm_rank(pair, &me);
  // A round goes to the peer in chunks of visits, and rank 0 looks at the clock between
  // chunks: on a busy machine one round of every cell can outlast the whole budget, and
  // the time rule (overtime only for under-sampled cells, nothing after the cap) must
  // hold within a round too. The peer learns each chunk up front, so the only messages
  // inside the timed loop are the measured ones and the synchronising barrier.
  constexpr std::size_t kChunk = 4;
  std::vector<Visit> rest;  // rank 0: the current round's visits not yet run
  std::set<int> overtime_cells;  // rank 0: cells sampled after the budget
  std::vector<Job> jobs;
  bool disturbed = false;  // rank 0: the last sample was disturbed; settle before the next
  for (;;) {
    int count = 0;
    if (me == 0) {
      jobs.clear();
      if (!interrupted()) {
        if (!rest.empty()) rest = sched.still_due(rest, seconds_since(start), rule);
        if (rest.empty()) {
          if (seconds_since(start) < rule.cap_s) hook();
          rest = sched.next_round_at(seconds_since(start), rule);
        }
        const std::size_t n = std::min(kChunk, rest.size());
        const bool overtime = seconds_since(start) >= rule.budget_s;
        for (std::size_t i = 0; i < n; ++i) {
          Job j = table[std::size_t(rest[i].cell)];
          j.cell = rest[i].cell;
          j.warmup = rest[i].warmup;
          j.overtime = overtime;
          if (overtime) overtime_cells.insert(j.cell);
          j.settle = disturbed && jobs.empty() && settle ? 1 : 0;
          disturbed = false;
          jobs.push_back(j);
        }
        rest.erase(rest.begin(), rest.begin() + std::ptrdiff_t(n));
      }
      count = int(jobs.size());
    }
    MPI_Bcast(&count, 1, MPI_INT, 0, pair);
    if (count == 0) break;
    jobs.resize(std::size_t(count));
    MPI_Bcast(jobs.data(), int(jobs.size() * sizeof(Job)), MPI_BYTE, 0, pair);
    for (const Job& j : jobs) {
      if (j.settle) {
        const auto t0 = Clock::now();
        settle();
        start += Clock::now() - t0;  // waiting is not measuring: the rule's clock stops
      }
      const double t = sample(j);
      // Sleeping while a CPU quota refills is not measuring either (Job::refill_us).
      start += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::micro>(j.refill_us));
      if (me != 0) continue;
      if (j.warmup)
        sched.warmed_up(j.cell);
      else if (std::isnan(t))
        disturbed = true;
      else
        sched.record(j.cell, t);
    }
    if (me == 0 && rest.empty()) progress(sched.progress());
  }
  return int(overtime_cells.size());
}

void spin_us(double us) {
  const double end = MPI_Wtime() + us * 1e-6;
  while (MPI_Wtime() < end) {
  }
}

TimerInfo check_timer() {
  TimerInfo info;
  info.tick_us = MPI_Wtick() * 1e6;
  double best = 1e9;
  for (int i = 0; i < 1000; ++i) {
    const double a = MPI_Wtime();
    double b = MPI_Wtime();
    while (b == a) b = MPI_Wtime();
    best = std::min(best, b - a);
  }
  info.step_us = best * 1e6;
  return info;
}

}  // namespace tessera::bench
