#include "tessera/scheduler/search.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tessera/error.hpp"
#include "tessera/scheduler/program.hpp"

namespace tessera::scheduler {

bool better(const Candidate& a, const Candidate& b) {
  const double ao = a.objective_us(), bo = b.objective_us();
  if (ao != bo) return ao < bo;
  if (a.plan.procs() != b.plan.procs()) return a.plan.procs() < b.plan.procs();
  if (a.plan.grid.x != b.plan.grid.x) return a.plan.grid.x < b.plan.grid.x;
  if (a.plan.scatter != b.plan.scatter) return int(a.plan.scatter) < int(b.plan.scatter);
  if (a.plan.gather != b.plan.gather) return int(a.plan.gather) < int(b.plan.gather);
  return int(a.plan.exchange) < int(b.plan.exchange);
}

namespace {

// Calls fn(grids) for the grids X*Y = P of consecutive blocks of P in [min_procs,
// max_procs], P ascending then X ascending (grids_for's order), until fn returns false.
// Divisors come from a sieve up to sqrt(P) per block: trial division for each P would
// dominate a sweep to thousands of ranks, and one sieve over the whole range would
// hold every divisor of every P at once.
template <class Fn>
void for_each_grid_chunk(int min_procs, int max_procs, Fn&& fn) {
  constexpr int kBlock = 1024;
  std::vector<std::vector<int>> small, large;
  std::vector<Grid> grids;
  for (long long lo = min_procs; lo <= max_procs; lo += kBlock) {
    const int first = int(lo), last = int(std::min<long long>(max_procs, lo + kBlock - 1));
    small.assign(std::size_t(last - first + 1), {});
    large.assign(small.size(), {});
    for (long long d = 1; d * d <= last; ++d)
      for (long long p = std::max<long long>((first + d - 1) / d * d, d * d); p <= last; p += d) {
        small[std::size_t(p - first)].push_back(int(d));
        if (d * d != p) large[std::size_t(p - first)].push_back(int(p / d));
      }
    grids.clear();
    for (int p = first; p <= last; ++p) {
      const auto& lo_div = small[std::size_t(p - first)];
      const auto& hi_div = large[std::size_t(p - first)];
      for (int x : lo_div) grids.push_back(Grid{x, p / x});
      for (auto it = hi_div.rbegin(); it != hi_div.rend(); ++it) grids.push_back(Grid{*it, p / *it});
    }
    if (!fn(grids)) return;
  }
}

// The grids of one chunk priced (ProgramGrid::why non-empty: excluded), each with the
// caches of the thread that priced it.
std::vector<detail::ProgramGrid> price_grids(const std::vector<Grid>& grids, const ProgramDescription& program,
                                             const PipelineDescription* fused, const MachineParams& machine,
                                             const CostModel& model, Pricing pricing, bool parallel,
                                             bool first_runs) {
  std::vector<detail::ProgramGrid> priced(grids.size());
  // One cache per thread, kept for the whole search (its entries hold for any grid).
  tbb::enumerable_thread_specific<detail::ProgramCache> caches;
  auto price_range = [&](std::size_t begin, std::size_t end) {
    detail::ProgramCache& cache = caches.local();
    for (std::size_t i = begin; i < end; ++i) {
      const Partition part(program.width, program.height, grids[i]);
      priced[i] = detail::price_grid(program, fused, part, machine, model, pricing, &cache);
      if (!first_runs || !priced[i].why.empty()) continue;
      // The exchange maps nothing: the scatter and gather algorithms decide.
      for (ScatterAlgorithm s : kScatterAlgorithms)
        for (GatherAlgorithm g : kGatherAlgorithms)
          priced[i].first_run.push_back(
              first_run_cost(program, Plan{grids[i], s, g, ExchangeAlgorithm::four_step}, machine).us);
    }
  };
  if (parallel && grids.size() > 256) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, grids.size(), 128),
                      [&](const tbb::blocked_range<std::size_t>& r) { price_range(r.begin(), r.end()); });
  } else {
    price_range(0, grids.size());
  }
  return priced;
}

// The best `limit` candidates offered so far (all when limit is 0): a max-heap by
// better(), whose top is the worst kept, so memory stays at `limit` candidates.
class Ranking {
 public:
  explicit Ranking(std::size_t limit) : limit_(limit) {}
  void offer(Candidate c) {
    ++offered_;
    if (limit_ == 0) {
      kept_.push_back(std::move(c));
    } else if (kept_.size() < limit_) {
      kept_.push_back(std::move(c));
      std::push_heap(kept_.begin(), kept_.end(), worse_first);
    } else if (better(c, kept_.front())) {
      std::pop_heap(kept_.begin(), kept_.end(), worse_first);
      kept_.back() = std::move(c);
      std::push_heap(kept_.begin(), kept_.end(), worse_first);
    }
  }
  std::size_t offered() const { return offered_; }
  /// A candidate left unpriced (fast pricing of a tree without an exact form).
  void skip() { ++skipped_; }
  std::size_t skipped() const { return skipped_; }
  std::vector<Candidate> take_sorted() {
    // A lambda rather than the function pointer lets the comparison inline.
    std::sort(kept_.begin(), kept_.end(), [](const Candidate& a, const Candidate& b) { return better(a, b); });
    return std::move(kept_);
  }

 private:
  static bool worse_first(const Candidate& a, const Candidate& b) { return better(a, b); }
  std::size_t limit_;
  std::size_t offered_ = 0;
  std::size_t skipped_ = 0;
  std::vector<Candidate> kept_;
};

// The candidates of one priced grid: every algorithm combination, or only the best.
void add_candidates(Ranking& ranking, Grid g, const detail::ProgramGrid& priced, bool keep_all, int runs) {
  auto make = [&](ScatterAlgorithm s, GatherAlgorithm ga, ExchangeAlgorithm e) {
    Candidate cand{Plan{g, s, ga, e}, {}};
    cand.predicted = priced.phases(cand.plan);
    cand.runs = runs;
    if (!priced.first_run.empty())  // empty: first touch not measured, nothing to add
      cand.first_run_us = priced.first_run[std::size_t(s) * kGatherAlgorithms.size() + std::size_t(ga)];
    return cand;
  };
  auto offer_to = [](Ranking& into, Candidate cand) {
    if (std::isfinite(cand.predicted.total)) into.offer(std::move(cand));
    else into.skip();
  };
  auto offer = [&](Candidate cand) { offer_to(ranking, std::move(cand)); };
  if (keep_all) {
    for (ScatterAlgorithm s : kScatterAlgorithms)
      for (GatherAlgorithm ga : kGatherAlgorithms)
        for (ExchangeAlgorithm e : kExchangeAlgorithms) offer(make(s, ga, e));
  } else if (runs > 0) {
    // A first run's faults depend on the scatter and gather together (the pool reuses
    // one's buffers for the other's): the best of every combination goes on.
    Ranking best(1);
    for (ScatterAlgorithm s : kScatterAlgorithms)
      for (GatherAlgorithm ga : kGatherAlgorithms)
        for (ExchangeAlgorithm e : kExchangeAlgorithms) offer_to(best, make(s, ga, e));
    for (Candidate& c : best.take_sorted()) offer(std::move(c));
    for (std::size_t i = 0; i < best.skipped(); ++i) ranking.skip();
  } else {
    // Phases are independent and each is a sum over steps with non-negative weights, so
    // the best plan of a grid takes the best algorithm of each phase (first in enum
    // order on ties, as better() would). Under a CPU quota the part of the wake-ups a
    // run pays depends on the whole run (wake_share): the phases with every wake-up
    // decide.
    auto best = [&](auto algorithms, auto field, auto with) {
      auto chosen = algorithms[0];
      double best_us = std::numeric_limits<double>::infinity();
      for (auto a : algorithms) {
        const double us = field(priced.nominal_phases(with(a)));
        if (us < best_us) best_us = us, chosen = a;
      }
      return chosen;
    };
    const Plan base{g, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::four_step};
    const auto s = best(kScatterAlgorithms, [](const PhaseMicros& t) { return t.scatter; },
                        [&](ScatterAlgorithm a) { Plan p = base; p.scatter = a; return p; });
    const auto ga = best(kGatherAlgorithms, [](const PhaseMicros& t) { return t.gather; },
                         [&](GatherAlgorithm a) { Plan p = base; p.gather = a; return p; });
    const auto e = best(kExchangeAlgorithms, [](const PhaseMicros& t) { return t.exchange; },
                        [&](ExchangeAlgorithm a) { Plan p = base; p.exchange = a; return p; });
    offer(make(s, ga, e));
  }
}

}  // namespace

const Candidate& SearchResult::chosen() const {
  if (ranking.empty()) {
    std::string why = "no feasible decomposition";
    if (!excluded.empty())
      why += " (e.g. " + to_string(excluded.front().grid) + ": " + excluded.front().reason + ")";
    throw InfeasiblePlan(why);
  }
  return ranking.front();
}

SearchResult search(const SearchRequest& request, const MachineParams& machine) {
  if (request.min_procs < 1 || request.max_procs < request.min_procs)
    throw InvalidArgument("procs range [" + std::to_string(request.min_procs) + ", " +
                          std::to_string(request.max_procs) + "] is empty or below 1");
  // The derivative pipeline is one program: lowered by describe_program, its compute
  // priced from whole-pipeline measurements when the table has them (fused).
  const PipelineDescription* fused = request.program ? nullptr : &request.pipeline;
  const ProgramDescription lowered = request.program ? ProgramDescription{} : describe_program(request.pipeline);
  const ProgramDescription& program = request.program ? *request.program : lowered;
  if (program.width < 1 || program.height < 1) throw InvalidArgument("image size must be at least 1x1");
  if (!(fused && machine.compute.prices_pipeline())) check_priceable(program, machine.compute);
  if (request.runs < 0) throw InvalidArgument("runs must be at least 0 (0: a long-running process)");
  if (request.runs > 0 && request.max_procs > kMaxFirstRunRanks)
    throw InvalidArgument("ranking first runs prices every rank's page faults of every candidate: at most " +
                          std::to_string(kMaxFirstRunRanks) + " ranks (asked for " +
                          std::to_string(request.max_procs) + ")");
  const auto model = make_model(request.model, machine);

  SearchResult result;
  result.model = request.model;
  result.compute_priced = !machine.compute.empty();
  // Simulate when the ranks over every grid searched fit the budget (counting stops as
  // soon as they do not: a sweep to 10^5 ranks has 10^6 grids).
  std::size_t ranks = 0;
  for_each_grid_chunk(request.min_procs, request.max_procs, [&](const std::vector<Grid>& grids) {
    for (const Grid& g : grids) ranks += std::size_t(g.procs());
    return ranks <= request.simulate_rank_budget;
  });
  result.pricing = ranks <= request.simulate_rank_budget ? Pricing::simulate : Pricing::fast;

  // Grids are priced a chunk at a time (in parallel when asked) and folded into the
  // ranking in grid order, so the result does not depend on the schedule of the threads
  // and memory does not grow with max_procs when request.keep bounds the ranking.
  Ranking ranking(request.keep);
  for_each_grid_chunk(request.min_procs, request.max_procs, [&](const std::vector<Grid>& grids) {
    auto priced =
        price_grids(grids, program, fused, machine, *model, result.pricing, request.parallel,
                    request.runs > 0 && !machine.first_touch.empty());
    for (std::size_t i = 0; i < grids.size(); ++i) {
      if (!priced[i].why.empty()) {
        ++result.excluded_grids;
        if (request.keep == 0 || result.excluded.size() < request.keep)
          result.excluded.push_back({grids[i].procs(), grids[i], std::move(priced[i].why)});
        continue;
      }
      add_candidates(ranking, grids[i], priced[i], request.keep_all, request.runs);
    }
    return true;
  });
  result.candidates = ranking.offered();
  result.unpriced = ranking.skipped();
  result.ranking = ranking.take_sorted();
  return result;
}

nlohmann::json to_json(const Candidate& c, ModelKind model) {
  const auto& t = c.predicted;
  nlohmann::json j = {{"procs", c.plan.procs()},
          {"grid", to_string(c.plan.grid)},
          {"scatter", std::string(to_string(c.plan.scatter))},
          {"gather", std::string(to_string(c.plan.gather))},
          {"exchange", std::string(to_string(c.plan.exchange))},
          {"model", std::string(to_string(model))},
          {"predicted_us",
           {{"scatter", t.scatter},
            {"exchange", t.exchange},
            {"compute", t.compute},
            {"gather", t.gather},
            {"reduce", t.reduce},
            {"total", t.total}}}};
  if (c.runs > 0) {
    j["runs"] = c.runs;
    j["first_run_extra_us"] = c.first_run_us;
    j["objective_us"] = c.objective_us();
  }
  return j;
}

nlohmann::json to_json(const SearchResult& r, std::size_t limit) {
  nlohmann::json j;
  j["chosen"] = r.ranking.empty() ? nlohmann::json(nullptr) : to_json(r.ranking.front(), r.model);
  auto& list = j["candidates"] = nlohmann::json::array();
  const std::size_t n = limit == 0 ? r.ranking.size() : std::min(limit, r.ranking.size());
  for (std::size_t i = 0; i < n; ++i) list.push_back(to_json(r.ranking[i], r.model));
  auto& ex = j["excluded"] = nlohmann::json::array();
  for (const auto& e : r.excluded)
    ex.push_back({{"procs", e.procs}, {"grid", to_string(e.grid)}, {"reason", e.reason}});
  j["candidates_total"] = r.candidates;
  j["excluded_total"] = r.excluded_grids;
  j["unpriced_candidates"] = r.unpriced;
  j["model"] = std::string(to_string(r.model));
  j["pricing"] = std::string(to_string(r.pricing));
  j["compute_priced"] = r.compute_priced;
  return j;
}

std::string format_table(const SearchResult& r, std::size_t limit) {
  std::ostringstream out;
  char line[256];
  const std::size_t n = limit == 0 ? r.ranking.size() : std::min(limit, r.ranking.size());
  // Programs with global reductions get a column for them; the derivative pipeline none.
  bool reduces = false;
  for (std::size_t i = 0; i < n; ++i) reduces = reduces || r.ranking[i].predicted.reduce != 0;
  // A search of first runs ranks by runs x total + the first run's page faults: shown.
  const int runs = n > 0 ? r.ranking[0].runs : 0;
  char objective[48] = "";
  if (runs > 0) std::snprintf(objective, sizeof objective, " %12s %12s", "first_run_us", runs == 1 ? "one_run_us" : "runs_us");
  std::snprintf(line, sizeof line, "%4s %5s %-9s %-7s %-7s %-12s %12s %12s %12s %12s%s %12s%s\n", "rank", "procs",
                "grid", "scatter", "gather", "exchange", "scatter_us", "exchange_us", "compute_us",
                "gather_us", reduces ? "    reduce_us" : "", "total_us", objective);
  out << line;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = r.ranking[i];
    const auto& t = c.predicted;
    char reduce[32] = "";
    if (reduces) std::snprintf(reduce, sizeof reduce, " %12.1f", t.reduce);
    if (runs > 0) std::snprintf(objective, sizeof objective, " %12.1f %12.1f", c.first_run_us, c.objective_us());
    std::snprintf(
        line, sizeof line, "%4zu %5d %-9s %-7s %-7s %-12s %12.1f %12.1f %12.1f %12.1f%s %12.1f%s\n", i + 1,
        c.plan.procs(), to_string(c.plan.grid).c_str(), std::string(to_string(c.plan.scatter)).c_str(),
        std::string(to_string(c.plan.gather)).c_str(), std::string(to_string(c.plan.exchange)).c_str(),
        t.scatter, t.exchange, t.compute, t.gather, reduce, t.total, objective);
    out << line;
  }
  if (n < r.candidates) out << "... " << r.candidates - n << " more candidates\n";
  if (r.excluded_grids > 0) {
    out << "excluded (" << r.excluded_grids << "):\n";
    for (std::size_t i = 0; i < r.excluded.size() && i < 10; ++i)
      out << "  P=" << r.excluded[i].procs << " " << to_string(r.excluded[i].grid) << ": "
          << r.excluded[i].reason << "\n";
    if (r.excluded_grids > 10) out << "  ... " << r.excluded_grids - 10 << " more\n";
  }
  return out.str();
}

}  // namespace tessera::scheduler
