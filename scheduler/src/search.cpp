#include "tessera/scheduler/search.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tessera/error.hpp"

namespace tessera::scheduler {

bool better(const Candidate& a, const Candidate& b) {
  if (a.predicted.total != b.predicted.total) return a.predicted.total < b.predicted.total;
  if (a.plan.procs() != b.plan.procs()) return a.plan.procs() < b.plan.procs();
  if (a.plan.grid.x != b.plan.grid.x) return a.plan.grid.x < b.plan.grid.x;
  if (a.plan.scatter != b.plan.scatter) return int(a.plan.scatter) < int(b.plan.scatter);
  if (a.plan.gather != b.plan.gather) return int(a.plan.gather) < int(b.plan.gather);
  return int(a.plan.exchange) < int(b.plan.exchange);
}

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
  const auto& pl = request.pipeline;
  if (pl.width < 1 || pl.height < 1) throw InvalidArgument("image size must be at least 1x1");
  const auto model = make_model(request.model, machine);

  SearchResult result;
  result.model = request.model;
  result.compute_priced = !machine.compute.empty();

  // Every grid X*Y = P, P ascending then X ascending (grids_for's order), from a divisor
  // sieve: trial division for each P would dominate a sweep to thousands of ranks.
  std::vector<std::vector<int>> divisors(std::size_t(request.max_procs - request.min_procs + 1));
  for (int d = 1; d <= request.max_procs; ++d)
    for (int p = ((request.min_procs + d - 1) / d) * d; p <= request.max_procs; p += d)
      divisors[std::size_t(p - request.min_procs)].push_back(d);
  std::vector<Grid> grids;
  std::size_t ranks = 0;
  for (int p = request.min_procs; p <= request.max_procs; ++p)
    for (int x : divisors[std::size_t(p - request.min_procs)]) {
      grids.push_back(Grid{x, p / x});
      ranks += std::size_t(p);
    }
  result.pricing = ranks <= request.simulate_rank_budget ? Pricing::simulate : Pricing::fast;
  if (request.keep_all) result.ranking.reserve(grids.size() * 24);

  // Price every grid (independent: in parallel when asked), then assemble candidates in
  // grid order so the result does not depend on the schedule of the threads.
  struct Priced {
    std::string why;  // non-empty: excluded
    CommCosts comm;
    double compute = 0;
  };
  std::vector<Priced> priced(grids.size());
  const auto& place = machine.placement;
  auto price_range = [&](std::size_t begin, std::size_t end) {
    PriceCache cache;
    for (std::size_t i = begin; i < end; ++i) {
      const Grid g = grids[i];
      const Partition part(pl.width, pl.height, g);
      auto& out = priced[i];
      out.why = infeasibility(part, pl.halo);
      if (!out.why.empty()) continue;
      out.comm = price_communication(*model, part, pl.halo, place, result.pricing, &cache, machine.copy);
      // Ranks beyond the cores of a node take turns: the busiest node needs
      // ceil(ranks on it / cores) rounds of the slowest tile.
      const int on_node = place.ranks_per_node > 0 ? std::min(place.ranks_per_node, g.procs()) : g.procs();
      const int rounds =
          place.cores_per_node > 0 ? (on_node + place.cores_per_node - 1) / place.cores_per_node : 1;
      // Fewer ranks than cores: the library gives each rank cores / ranks threads
      // (Session::threads_for); compute_us prices that thread count from the pipeline
      // measurements made with it (or scales single passes linearly in old tables).
      const int threads = place.cores_per_node > on_node && on_node > 0 ? place.cores_per_node / on_node : 1;
      out.compute = result.compute_priced ? rounds * compute_us(machine.compute, part, pl, threads) : 0.0;
    }
  };
  if (request.parallel && grids.size() > 256) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, grids.size(), 128),
                      [&](const tbb::blocked_range<std::size_t>& r) { price_range(r.begin(), r.end()); });
  } else {
    price_range(0, grids.size());
  }

  for (std::size_t i = 0; i < grids.size(); ++i) {
    const Grid g = grids[i];
    if (!priced[i].why.empty()) {
      result.excluded.push_back({g.procs(), g, std::move(priced[i].why)});
      continue;
    }
    const CommCosts& c = priced[i].comm;
    const double compute = priced[i].compute;
    auto make = [&](ScatterAlgorithm s, GatherAlgorithm ga, ExchangeAlgorithm e) {
      Candidate cand{Plan{g, s, ga, e}, {}};
      auto& t = cand.predicted;
      t.scatter = pl.scatters * c.scatter[int(s)];
      t.exchange = pl.exchanges * c.exchange[int(e)];
      t.compute = compute;
      t.gather = pl.gathers * c.gather[int(ga)];
      t.total = t.scatter + t.exchange + t.compute + t.gather;
      return cand;
    };
    if (request.keep_all) {
      for (ScatterAlgorithm s : kScatterAlgorithms)
        for (GatherAlgorithm ga : kGatherAlgorithms)
          for (ExchangeAlgorithm e : kExchangeAlgorithms) result.ranking.push_back(make(s, ga, e));
    } else {
      // Phases are independent, so the best plan of a grid takes the best of each phase
      // (first in enum order on ties, as better() would).
      auto argmin = [](const auto& a) { return int(std::min_element(a.begin(), a.end()) - a.begin()); };
      result.ranking.push_back(make(ScatterAlgorithm(argmin(c.scatter)), GatherAlgorithm(argmin(c.gather)),
                                    ExchangeAlgorithm(argmin(c.exchange))));
    }
  }
  // A lambda rather than the function pointer lets the comparison inline.
  std::sort(result.ranking.begin(), result.ranking.end(),
            [](const Candidate& a, const Candidate& b) { return better(a, b); });
  return result;
}

nlohmann::json to_json(const Candidate& c, ModelKind model) {
  const auto& t = c.predicted;
  return {{"procs", c.plan.procs()},
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
            {"total", t.total}}}};
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
  j["model"] = std::string(to_string(r.model));
  j["pricing"] = std::string(to_string(r.pricing));
  j["compute_priced"] = r.compute_priced;
  return j;
}

std::string format_table(const SearchResult& r, std::size_t limit) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%4s %5s %-9s %-7s %-7s %-12s %12s %12s %12s %12s %12s\n", "rank", "procs",
                "grid", "scatter", "gather", "exchange", "scatter_us", "exchange_us", "compute_us",
                "gather_us", "total_us");
  out << line;
  const std::size_t n = limit == 0 ? r.ranking.size() : std::min(limit, r.ranking.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = r.ranking[i];
    const auto& t = c.predicted;
    std::snprintf(
        line, sizeof line, "%4zu %5d %-9s %-7s %-7s %-12s %12.1f %12.1f %12.1f %12.1f %12.1f\n", i + 1,
        c.plan.procs(), to_string(c.plan.grid).c_str(), std::string(to_string(c.plan.scatter)).c_str(),
        std::string(to_string(c.plan.gather)).c_str(), std::string(to_string(c.plan.exchange)).c_str(),
        t.scatter, t.exchange, t.compute, t.gather, t.total);
    out << line;
  }
  if (n < r.ranking.size()) out << "... " << r.ranking.size() - n << " more candidates\n";
  if (!r.excluded.empty()) {
    out << "excluded (" << r.excluded.size() << "):\n";
    for (std::size_t i = 0; i < r.excluded.size() && i < 10; ++i)
      out << "  P=" << r.excluded[i].procs << " " << to_string(r.excluded[i].grid) << ": "
          << r.excluded[i].reason << "\n";
    if (r.excluded.size() > 10) out << "  ... " << r.excluded.size() - 10 << " more\n";
  }
  return out.str();
}

}  // namespace tessera::scheduler
