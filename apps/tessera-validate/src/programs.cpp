#include "tessera/validate/programs.hpp"

#include <algorithm>
#include <set>

#include "tessera/apps/corners.hpp"
#include "tessera/apps/edges.hpp"
#include "tessera/error.hpp"
#include "tessera/names.hpp"
#include "tessera/pipeline.hpp"

namespace tessera::validation {

Program app_program(const std::string& app, double sigma) {
  if (app == "gauss") {
    GaussianOptions o;
    o.sigma = sigma;
    return derivatives_program(o);
  }
  if (app == "edges") {
    apps::EdgesOptions o;
    o.sigma = sigma;
    return apps::edges_program(o);
  }
  if (app == "corners") {
    apps::CornersOptions o;
    o.sigma = sigma;
    return apps::corners_program(o);
  }
  throw InvalidArgument("no program for app '" + app + "' (gauss, edges, corners)");
}

std::vector<bool> in_loop(const ProgramDescription& program) {
  std::vector<bool> out(program.steps.size(), false);
  for (std::size_t i = 0; i < program.steps.size(); ++i) {
    const ProgramStep& s = program.steps[i];
    if (s.expected_rounds > 0 && s.repeat_first >= 0)
      for (std::size_t k = std::size_t(s.repeat_first); k <= i; ++k) out[k] = true;
  }
  return out;
}

bool exchanges_in_compute(const ProgramDescription& program) {
  const auto loop = in_loop(program);
  for (std::size_t i = 0; i < program.steps.size(); ++i)
    if (loop[i] && program.steps[i].kind == ProgramStep::Kind::exchange) return true;
  return false;
}

scheduler::PhaseMicros as_measured(const ProgramDescription& program, const scheduler::ProgramCost& cost) {
  const auto loop = in_loop(program);
  scheduler::PhaseMicros out;
  for (const auto& s : cost.steps) {
    const bool looped = s.index < loop.size() && loop[s.index];
    switch (s.kind) {
      case ProgramStep::Kind::scatter:
        out.scatter += s.us;
        break;
      case ProgramStep::Kind::gather:
        out.gather += s.us;
        break;
      case ProgramStep::Kind::exchange:
        (looped ? out.compute : out.exchange) += s.us;
        break;
      case ProgramStep::Kind::compute:
      case ProgramStep::Kind::reduce:
        out.compute += s.us;
        break;
    }
  }
  out.total = cost.phases.total;
  return out;
}

std::vector<Plan> covering_plans(Grid grid) {
  const std::size_t n =
      std::max({kScatterAlgorithms.size(), kGatherAlgorithms.size(), kExchangeAlgorithms.size()});
  std::vector<Plan> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(Plan{grid, kScatterAlgorithms[i % kScatterAlgorithms.size()],
                       kGatherAlgorithms[i % kGatherAlgorithms.size()],
                       kExchangeAlgorithms[i % kExchangeAlgorithms.size()]});
  return out;
}

std::vector<int> loop_rounds(const ProgramDescription& program,
                             const std::vector<ProgramStep>& communication) {
  const auto loop = in_loop(program);
  std::vector<int> out;
  for (const auto& end : program.steps) {
    if (end.expected_rounds <= 0) continue;
    auto same = [&](const ProgramStep& s) { return s.kind == end.kind && s.operation == end.operation; };
    int outside = 0;
    for (std::size_t i = 0; i < program.steps.size(); ++i)
      if (!loop[i] && same(program.steps[i])) ++outside;
    out.push_back(int(std::count_if(communication.begin(), communication.end(), same)) - outside);
  }
  return out;
}

std::string rounds_ran(const std::map<std::string, std::vector<int>>& by_grid, std::size_t loop) {
  std::set<int> distinct;
  for (const auto& [grid, n] : by_grid)
    if (loop < n.size()) distinct.insert(n[loop]);
  if (distinct.size() == 1) return std::to_string(*distinct.begin());
  std::string out;
  for (const auto& [grid, n] : by_grid)
    if (loop < n.size()) out += (out.empty() ? "" : ", ") + std::to_string(n[loop]) + " (" + grid + ")";
  return out;
}

}  // namespace tessera::validation
