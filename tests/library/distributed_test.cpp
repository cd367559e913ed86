// Runs under mpiexec at several P: every grid, every scatter x gather x exchange
// algorithm, against the sequential result bit for bit.
#include "tessera/distributed.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <random>
#include <thread>

#include "tessera/error.hpp"
#include "tessera/pipeline.hpp"
#include "tessera/session.hpp"
// The communicator behind a Team (detail::Comm), to check which one a team is.
#include "../../library/src/mpi/comm.hpp"

namespace tessera {
namespace {

int g_argc = 0;
char** g_argv = nullptr;

const Session& session() {
  static Session s(g_argc, g_argv);
  return s;
}

Image random_image(int w, int h, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img.at(x, y) = u(rng);
  return img;
}

bool bit_equal(const Image& a, const Image& b) {
  return a.width() == b.width() && a.height() == b.height() &&
         std::memcmp(a.data(), b.data(), sizeof(float) * std::size_t(a.width()) * std::size_t(a.height())) ==
             0;
}

struct Case {
  int w, h;
  double sigma;
};
const Case kCases[] = {{97, 61, 1.0}, {64, 48, 3.0}, {13, 11, 1.0}, {1, 1, 1.0}};

TEST(Distributed, ScatterGatherRoundTripEveryGridAndAlgorithm) {
  const auto& s = session();
  const Team team = s.team(s.size());
  for (const Case& c : {Case{97, 61, 1}, Case{5, 3, 1}, Case{1, 7, 1}}) {
    const Image img = random_image(c.w, c.h, 11);
    for (const Grid& g : grids_for(s.size())) {
      if (g.x > c.w || g.y > c.h) continue;  // a rank would own no pixel
      Partition part(c.w, c.h, g);
      for (ScatterAlgorithm sa : kScatterAlgorithms)
        for (GatherAlgorithm ga : kGatherAlgorithms) {
          Tile tile = scatter(team, img, part, Halo{0, 0}, sa);
          ASSERT_EQ(tile.box(), part.tile(s.rank()));
          Image back = gather(team, tile.interior(), part, ga);
          if (s.is_root())
            EXPECT_TRUE(bit_equal(back, img)) << c.w << "x" << c.h << " grid " << to_string(g) << " scatter "
                                              << to_string(sa) << " gather " << to_string(ga);
          else
            EXPECT_TRUE(back.empty());
        }
    }
  }
}

TEST(Distributed, GatherFromHaloedTilesRunsItsPlanAndRefusesAnotherLayout) {
  // Results in the interior of haloed tiles: the plan's strided sends and the root's
  // copy bring them back bit for bit, with a Gather of that source and with the
  // one-shot form (which takes the source from the view's row spacing); a Gather of
  // another source refuses them, on every rank that can tell, with no hang.
  const auto& s = session();
  const Team team = s.team(s.size());
  const Image img = random_image(97, 61, 5);
  for (const Grid& g : grids_for(s.size()))
    for (Halo halo : {Halo{2, 1}, Halo{0, 3}}) {
      const Partition part(97, 61, g);
      if (!infeasibility(part, halo).empty()) continue;
      for (GatherAlgorithm ga : kGatherAlgorithms) {
        const Tile tile = scatter(team, img, part, halo, ScatterAlgorithm::sbt);
        Image back;
        if (s.is_root()) back = Image(97, 61);
        Gather(team, part, ga, GatherSource{halo, false}).run(tile.interior(), back);
        const Image once = gather(team, tile.interior(), part, ga);
        if (s.is_root()) {
          EXPECT_TRUE(bit_equal(back, img)) << to_string(g) << " " << to_string(ga);
          EXPECT_TRUE(bit_equal(once, img)) << to_string(g) << " " << to_string(ga);
        }
      }
    }
  // The default source takes the root's result in place and every result back to back.
  const Partition part(97, 61, grids_for(s.size()).front());
  const Tile tile = scatter(team, img, part, Halo{2, 2}, ScatterAlgorithm::oft);
  Image back;
  if (s.is_root()) back = Image(97, 61);
  const Gather plain(team, part, GatherAlgorithm::oft);
  // Every rank checks its own view before any message: no rank waits for one that threw.
  EXPECT_THROW(plain.run(tile.interior(), back), InvalidArgument);
}

// Pixel (x, y) holds y * w + x: a tile can check where each of its values came from.
Image coordinate_image(int w, int h) {
  Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img.at(x, y) = float(y * w + x);
  return img;
}

TEST(Distributed, TilesReceiveTheRootsPixels) {
  // Non-root ranks cannot see the image, so the root scatters an image whose pixel
  // values encode their coordinates; every rank checks its own tile.
  const auto& s = session();
  const Team team = s.team(s.size());
  const int w = 97, h = 61;
  const Image img = coordinate_image(w, h);
  const Image nothing;
  for (const Grid& g : grids_for(s.size())) {
    Partition part(w, h, g);
    for (ScatterAlgorithm sa : kScatterAlgorithms) {
      Tile tile = scatter(team, s.is_root() ? img : nothing, part, Halo{2, 1}, sa);
      const Box b = tile.box();
      for (int y = 0; y < b.height; ++y)
        for (int x = 0; x < b.width; ++x)
          ASSERT_EQ(tile.interior().at(x, y), float((b.y0 + y) * w + b.x0 + x))
              << "rank " << s.rank() << " grid " << to_string(g) << " " << to_string(sa);
    }
  }
}

// BORDER_REFLECT_101 of a coordinate into [0, n).
int reflect(int i, int n) {
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

TEST(Distributed, ExchangeFillsHalosAcrossBeginEndAndReusesItsPlan) {
  // The root's pixels encode their coordinates; after the exchange every halo pixel
  // holds its (mirrored) neighbour's value, whether run() or begin(), interior work,
  // end() is used, and on a second tile with the same prepared plan.
  const auto& s = session();
  const Team team = s.team(s.size());
  const int w = 97, h = 61;
  const Image img = coordinate_image(w, h);
  const Halo halo{3, 2};
  for (const Grid& g : grids_for(s.size())) {
    const Partition part(w, h, g);
    if (!infeasibility(part, halo).empty()) continue;
    const Scatter scatter(team, part, halo, ScatterAlgorithm::sbt);
    for (ExchangeAlgorithm e : kExchangeAlgorithms) {
      BorderExchange exchange(team, part, halo, e);
      for (int use = 0; use < 3; ++use) {
        Tile tile = scatter.run(img);
        double interior = 0;
        if (use == 0) {
          exchange.run(tile);
        } else {
          exchange.begin(tile);
          const ConstView in = tile.interior();
          for (int y = 0; y < in.height; ++y)
            for (int x = 0; x < in.width; ++x) interior += in.at(x, y);
          exchange.end();
        }
        (void)interior;
        const Box b = tile.box();
        const View v = tile.interior();
        for (int y = -halo.y; y < b.height + halo.y; ++y)
          for (int x = -halo.x; x < b.width + halo.x; ++x) {
            const int gx = reflect(b.x0 + x, w), gy = reflect(b.y0 + y, h);
            ASSERT_EQ(v.at(x, y), float(gy * w + gx))
                << "rank " << s.rank() << " grid " << to_string(g) << " " << to_string(e) << " use " << use
                << " at " << x << "," << y;
          }
      }
    }
  }
}

TEST(Distributed, TheExecutorRunsThePlanTheSchedulerPrices) {
  // The executor's prepared plan is the library's plan function's result, step for step
  // (the scheduler prices scatter_plan / gather_plan / exchange_plan of the same inputs).
  const auto& s = session();
  const Team team = s.team(s.size());
  const Partition part(64, 48, grids_for(s.size()).back());
  const Halo halo{2, 2};
  auto same = [](const CommPlan& a, const CommPlan& b) {
    if (a.procs() != b.procs() || a.algorithm != b.algorithm) return false;
    for (int r = 0; r < a.procs(); ++r) {
      const auto &x = a.ranks[std::size_t(r)], &y = b.ranks[std::size_t(r)];
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (x[i].kind != y[i].kind || x[i].peer != y[i].peer || x[i].first != y[i].first ||
            x[i].last != y[i].last || !(x[i].box == y[i].box) || x[i].layout != y[i].layout ||
            x[i].posted != y[i].posted)
          return false;
    }
    return true;
  };
  for (auto a : kScatterAlgorithms) EXPECT_TRUE(same(Scatter(team, part, halo, a).plan(), scatter_plan(a, part, halo)));
  for (auto a : kGatherAlgorithms) EXPECT_TRUE(same(Gather(team, part, a).plan(), gather_plan(a, part)));
  for (auto a : kExchangeAlgorithms)
    EXPECT_TRUE(same(BorderExchange(team, part, halo, a).plan(), exchange_plan(a, part, halo)));
}

TEST(Distributed, TracedPlansTimeEveryStepOfEveryRunAndNameIt) {
  // One row per run (an exchange's begin() and end() are one run), one time per step of
  // this rank's program, each >= 0; named steps; no row once tracing stops; the data
  // still arrive bit for bit.
  const auto& s = session();
  const Team team = s.team(s.size());
  const int w = 97, h = 61;
  const Halo halo{3, 2};
  const Image img = coordinate_image(w, h);
  const Partition part(w, h, grids_for(s.size()).back());
  ASSERT_TRUE(infeasibility(part, halo).empty());
  const std::size_t rank = std::size_t(s.rank());
  auto expect_rows = [&](const StepSeconds& t, const CommPlan& plan, std::size_t runs, const char* what) {
    const std::size_t steps = plan.ranks[rank].size();
    ASSERT_EQ(t.runs.size(), runs) << what;
    ASSERT_EQ(t.steps.size(), steps) << what;
    for (const auto& name : t.steps) EXPECT_FALSE(name.empty()) << what;
    for (const auto& row : t.runs) {
      ASSERT_EQ(row.size(), steps) << what;
      for (double sec : row) EXPECT_GE(sec, 0.0) << what;
    }
  };
  for (ScatterAlgorithm sa : kScatterAlgorithms)
    for (GatherAlgorithm ga : kGatherAlgorithms)
      for (ExchangeAlgorithm ea : kExchangeAlgorithms) {
        Scatter scatter(team, part, halo, sa);
        BorderExchange exchange(team, part, halo, ea);
        Gather gather(team, part, ga, GatherSource{halo, false});  // the results: tile interiors
        StepSeconds ts, te, tg;
        scatter.time_steps(&ts);
        exchange.time_steps(&te);
        gather.time_steps(&tg);
        for (int run = 0; run < 3; ++run) {
          if (run == 2) {  // stopped: the third run leaves no row
            scatter.time_steps(nullptr);
            exchange.time_steps(nullptr);
            gather.time_steps(nullptr);
          }
          Tile tile = scatter.run(img);
          if (run == 0) {
            exchange.run(tile);
          } else {
            exchange.begin(tile);
            exchange.end();
          }
          Image back;
          if (s.is_root()) back = Image(w, h);
          gather.run(tile.interior(), back);
          if (s.is_root()) {
            EXPECT_TRUE(bit_equal(back, img));
          }
        }
        expect_rows(ts, scatter.plan(), 2, "scatter");
        expect_rows(te, exchange.plan(), 2, "exchange");
        expect_rows(tg, gather.plan(), 2, "gather");
      }
  // One record per plan: another plan's steps are refused (a scatter's and a gather's
  // differ on every rank), the record left as it was; the same plan again is fine.
  {
    Scatter scatter(team, part, halo, ScatterAlgorithm::oft);
    Gather gather(team, part, GatherAlgorithm::oft);
    StepSeconds t;
    scatter.time_steps(&t);
    const auto names = t.steps;
    EXPECT_THROW(gather.time_steps(&t), InvalidArgument);
    EXPECT_EQ(t.steps, names);
    EXPECT_NO_THROW(scatter.time_steps(&t));
  }
  // A send names its bytes and peer.
  if (s.size() == 2) {
    Scatter scatter(team, Partition(8, 4, Grid{1, 2}), Halo{}, ScatterAlgorithm::oft);
    StepSeconds t;
    scatter.time_steps(&t);
    (void)scatter.run(random_image(8, 4, 3));
    if (s.is_root()) {
      ASSERT_FALSE(t.steps.empty());
      EXPECT_EQ(t.steps.front(), "send 64 B to 1");
    }
  }
}

TEST(Distributed, DerivativesBitIdenticalToOneProcess) {
  const auto& s = session();
  const Team team = s.team(s.size());
  for (const Case& c : kCases) {
    GaussianOptions o;
    o.sigma = c.sigma;
    const Image img = random_image(c.w, c.h, 5);
    const Halo halo = halo_for(o);
    const bool image_ok = infeasibility(Partition(c.w, c.h, Grid{1, 1}), halo).empty();
    std::vector<Image> reference;
    if (image_ok && s.is_root()) reference = gaussian_derivatives(img, o);
    for (const Grid& g : grids_for(s.size())) {
      const bool feasible = g.x <= c.w && g.y <= c.h && infeasibility(Partition(c.w, c.h, g), halo).empty();
      for (ScatterAlgorithm sa : kScatterAlgorithms)
        for (GatherAlgorithm ga : kGatherAlgorithms)
          for (ExchangeAlgorithm ea : kExchangeAlgorithms) {
            Plan plan{g, sa, ga, ea};
            if (!feasible) {
              // Infeasible plans are refused on every rank, with the reason, and nothing hangs.
              EXPECT_THROW(gaussian_derivatives(s, img, o, plan), InfeasiblePlan) << describe(plan);
              continue;
            }
            auto out = gaussian_derivatives(s, img, o, plan);
            if (!s.is_root()) {
              EXPECT_TRUE(out.empty());
              continue;
            }
            ASSERT_EQ(out.size(), reference.size());
            for (std::size_t i = 0; i < out.size(); ++i)
              EXPECT_TRUE(bit_equal(out[i], reference[i]))
                  << c.w << "x" << c.h << " sigma " << c.sigma << " " << describe(plan) << " "
                  << to_string(o.derivatives[i]);
          }
    }
  }
}

TEST(Distributed, FewerRanksThanLaunchedIdle) {
  const auto& s = session();
  const Team team = s.team(s.size());
  GaussianOptions o;
  const Image img = random_image(40, 30, 3);
  auto reference = s.is_root() ? gaussian_derivatives(img, o) : std::vector<Image>{};
  // With one rank launched, "fewer" is that one rank.
  const int used = std::max(1, s.size() - 1);
  auto out = gaussian_derivatives(s, img, o, Plan{Grid{1, used}});
  if (s.is_root()) {
    ASSERT_EQ(out.size(), reference.size());
    for (std::size_t i = 0; i < out.size(); ++i) EXPECT_TRUE(bit_equal(out[i], reference[i]));
  }
  EXPECT_THROW(gaussian_derivatives(s, img, o, Plan{Grid{1, s.size() + 1}}), InfeasiblePlan);
}

TEST(Distributed, PairLatencyIsRankZerosReadingOnEveryMember) {
  const auto& s = session();
  const Team team = s.team(s.size());
  const double us = team.pair_latency_us(50);
  if (s.size() == 1) {
    EXPECT_EQ(us, 0.0);  // no pair
  } else {
    EXPECT_TRUE(std::isfinite(us));
    EXPECT_GT(us, 0.0);
    EXPECT_LT(us, 1e5);  // an 8-byte round trip, not a timeout
  }
  EXPECT_EQ(team.max(us), us);  // the same value on every member
  EXPECT_EQ(-team.max(-us), us);
  const Team one = s.team(1);
  if (one.active()) {
    EXPECT_EQ(one.pair_latency_us(), 0.0);
  }
  // Checked before any message, so every rank throws and none waits for a peer.
  EXPECT_THROW(team.pair_latency_us(0), InvalidArgument);
}

// The sleeping maximum gives the spinning one's values, and a member that waits in it for a
// late one uses little CPU meanwhile (what keeps an emulated node's quota for its
// node-mates). Only the sleeping side is bounded: a spinning wait's CPU time depends on
// whether the ranks share cores.
TEST(Distributed, ASleepingMaximumIsTheMaximumAndLeavesTheCore) {
  const auto& s = session();
  const Team team = s.team(s.size());
  const std::vector<double> mine{double(s.rank()), -double(s.rank()), 7.0};
  const std::vector<double> spun = team.max(mine);
  const std::vector<double> slept = team.max(mine, Session::Wait::sleep);
  EXPECT_EQ(slept, spun);
  EXPECT_EQ(slept, (std::vector<double>{double(s.size() - 1), 0.0, 7.0}));
  if (s.size() < 2) return;
  auto cpu_s = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
  };
  team.barrier();
  const bool late = s.rank() == s.size() - 1;
  if (late) std::this_thread::sleep_for(std::chrono::milliseconds(40));
  const double wall0 = Team::now(), cpu0 = cpu_s();
  const auto most = team.max(std::vector<double>{late ? 1.0 : 0.0}, Session::Wait::sleep);
  const double wall = Team::now() - wall0, cpu = cpu_s() - cpu0;
  EXPECT_EQ(most[0], 1.0);
  if (!late) {
    EXPECT_GT(wall, 0.02) << "the early members waited for the late one";
    EXPECT_LT(cpu, 0.5 * wall) << "a sleeping wait used " << cpu * 1e3 << " ms of CPU in " << wall * 1e3 << " ms";
  }
}

// A team of fewer ranks than started is split once and kept by the session: a later
// team of that size is the same communicator (no collective), a team object's end does
// not free it, and every size gets its own.
TEST(Distributed, TeamsOfFewerRanksAreKeptBySize) {
  const auto& s = session();
  MPI_Comm first = MPI_COMM_NULL;
  {
    const Team one = s.team(1);
    EXPECT_EQ(one.active(), s.rank() == 0);
    if (one.active()) first = one.comm().comm;
  }  // its communicator outlives it
  for (int procs = 1; procs <= s.size(); ++procs) {
    const Team a = s.team(procs), b = s.team(procs);
    ASSERT_EQ(a.active(), s.rank() < procs);
    ASSERT_EQ(b.active(), s.rank() < procs);
    if (!a.active()) continue;
    EXPECT_EQ(a.size(), procs);
    EXPECT_EQ(a.rank(), s.rank());
    EXPECT_EQ(a.comm().comm, b.comm().comm);
    if (procs == 1) {
      EXPECT_EQ(a.comm().comm, first);
    }
    if (procs == s.size()) {
      EXPECT_EQ(a.comm().comm, MPI_COMM_WORLD);
    }
    a.barrier();  // usable: a collective over exactly its members
    EXPECT_EQ(a.max(double(s.rank())), double(procs - 1));
  }
}

// The clock offset: each rank's clock shifted by rank x 1.5 s is found shifted by as
// much (within a round trip's half: under 20 ms even with seven ranks on two cores);
// the session's own steady clocks, one clock on one host, agree within as much.
double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

TEST(Distributed, ClockOffsetsRecoverEachRanksShift) {
  const auto& s = session();
  const double shift = 1.5 * s.rank();
  auto shifted = [shift] { return shift + steady_seconds(); };
  EXPECT_NEAR(s.estimate_clock_offset(shifted, 20), shift, 0.02);
  EXPECT_NEAR(s.clock_offset(), 0.0, 0.02);
  EXPECT_EQ(s.clock_offset(), s.clock_offset());  // kept: local after the first call
  const double root = s.synced_now();
  EXPECT_NEAR(root, steady_seconds(), 0.02);
  EXPECT_THROW(s.estimate_clock_offset(shifted, 0), InvalidArgument);
}

// The placement rule agreed: each member's own rule, true only where it holds on all.
TEST(Distributed, LatencyShowsStateOnEveryMemberIsTheRuleAgreed) {
  const auto& s = session();
  const Team team = s.team(s.size());
  const int threads = int(std::thread::hardware_concurrency());
  EXPECT_EQ(latency_shows_state_on_every_member(team, 2, 0.0), latency_shows_state(2, threads, 0.0));
  EXPECT_FALSE(latency_shows_state_on_every_member(team, 2, 0.5));  // a CPU quota
  EXPECT_FALSE(latency_shows_state_on_every_member(team, 1, 0.0));  // ranks 0 and 1 on two nodes
  // One member whose rule fails (rank 0 under a quota) makes it fail on every member.
  EXPECT_FALSE(latency_shows_state_on_every_member(team, 2, s.rank() == 0 ? 0.5 : 0.0));
}

// Waiting for the quiet state: a watch whose lowest reading no real one reaches reads
// every reading slow and waits out its budget, alike on every member; a fresh watch
// (its first reading its own reference) does not wait.
TEST(Distributed, WaitForQuietStateWaitsOutTheBudgetWhileSlowAndAlikeEverywhere) {
  const auto& s = session();
  const Team team = s.team(s.size());
  LatencyWatch fresh(LatencyWatch::kSlowFactor, 5.0);
  EXPECT_FALSE(wait_for_quiet_state(team, fresh));
  EXPECT_EQ(fresh.waited_s(), 0.0);
  LatencyWatch strict(LatencyWatch::kSlowFactor, 0.25);
  strict.read(1e-9);  // a floor below any reading
  const bool slow = wait_for_quiet_state(team, strict);
  if (s.size() == 1) {  // no pair: nothing to read, nothing slow
    EXPECT_FALSE(slow);
    EXPECT_EQ(strict.waited_s(), 0.0);
    return;
  }
  EXPECT_TRUE(slow);
  EXPECT_GE(strict.waited_s(), 0.25);
  EXPECT_LT(strict.waited_s(), 5.0);
  EXPECT_EQ(team.max(strict.waited_s()), strict.waited_s());  // the same on every member
  EXPECT_EQ(-team.max(-strict.waited_s()), strict.waited_s());
}

TEST(Distributed, AgreeStopsEveryRankWithTheFirstMessage) {
  const auto& s = session();
  const Team team = s.team(s.size());
  try {
    s.agree([&] {
      if (s.rank() == s.size() - 1) throw InvalidArgument("rank-local problem");
    });
    FAIL() << "agree did not throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "rank-local problem");
  }
  EXPECT_NO_THROW(s.agree([] {}));
}

}  // namespace
}  // namespace tessera
