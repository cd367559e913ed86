#pragma once
// The shipped apps' programs as the scheduler prices them, for `tessera-plan --app NAME`:
// each app's own Program (edges.hpp, corners.hpp, gauss.hpp), lowered by
// Program::describe() — the steps its executor runs, not a copy of them. Pure.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/apps/corners.hpp"
#include "tessera/apps/edges.hpp"
#include "tessera/apps/gauss.hpp"
#include "tessera/error.hpp"
#include "tessera/program_description.hpp"

namespace tessera::apps {

/// The options that change an app's program (thresholds only change its values).
struct DescribeOptions {
  double sigma = 1.0;          ///< derivative scale (every app)
  std::optional<int> radius;   ///< derivative kernel radius override
  std::optional<double> rho;   ///< corners: integration scale (default 2 sigma)
  /// Rounds the scheduler expects of an iterative operation (edges' hysteresis); empty:
  /// the library's estimate. The real count depends on how many tiles an edge crosses.
  std::optional<int> rounds;
};

inline const std::vector<std::string>& app_names() {
  static const std::vector<std::string> names{"gauss", "edges", "corners"};
  return names;
}

/// The program of app `name` on a width x height image. Throws InvalidArgument for an
/// unknown name (listing app_names()) or options the app's kernels refuse.
inline ProgramDescription describe_app(std::string_view name, int width, int height, const DescribeOptions& o) {
  if (o.rounds && *o.rounds < 1) throw InvalidArgument("expected rounds must be at least 1");
  auto with_rounds = [&](ProgramDescription d) {
    if (o.rounds)
      for (auto& s : d.steps)
        if (s.expected_rounds > 0) {
          s.expected_rounds = *o.rounds;  // on every grid, one tile's too
          s.one_tile_rounds = 0;
        }
    return d;
  };
  if (name == "gauss") {
    GaussianOptions g;
    g.sigma = o.sigma;
    g.radius = o.radius;
    return with_rounds(gauss_program(g).describe(width, height));
  }
  if (name == "edges") {
    EdgesOptions e;
    e.sigma = o.sigma;
    e.radius = o.radius;
    return with_rounds(edges_program(e).describe(width, height));
  }
  if (name == "corners") {
    if (o.rho && !(*o.rho > 0)) throw InvalidArgument("--rho must be > 0");
    CornersOptions c;
    c.sigma = o.sigma;
    c.radius = o.radius;
    c.rho = o.rho.value_or(0.0);
    return with_rounds(corners_program(c).describe(width, height));
  }
  std::string known;
  for (const auto& n : app_names()) known += (known.empty() ? "" : ", ") + n;
  throw InvalidArgument("unknown app '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace tessera::apps
