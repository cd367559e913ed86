#pragma once
// The programs of tessera's shipped apps, as the scheduler prices them
// (ProgramDescription), for `tessera-plan --app NAME`. Pure.
//
// STAND-INS: gauss_program is the library's own derivative pipeline (describe_pipeline
// lowered by scheduler::describe_program). edges_program and corners_program are
// written by hand from SPEC's definitions of the apps until the operation library's
// Program::describe() of the apps' programs lands; each is one function for that code
// to replace (build the app's tessera::Program and return its describe()).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/gaussian.hpp"
#include "tessera/program_description.hpp"

namespace tessera::planning {

/// The apps' options that change their programs.
struct AppOptions {
  double sigma = 1.0;                ///< derivative scale (all apps)
  std::optional<int> radius;         ///< gauss: kernel radius override
  std::optional<double> rho;         ///< corners: integration scale (default 2 sigma)
  /// edges: rounds of the hysteresis loop the scheduler expects (exchange, propagate,
  /// "changed?" allreduce); the real count depends on how many tiles an edge crosses.
  int hysteresis_rounds = 3;
};

/// Names accepted by app_program: "gauss", "edges", "corners".
const std::vector<std::string>& app_names();

/// tessera-gauss: the five standard derivatives (the derivative pipeline).
ProgramDescription gauss_program(int width, int height, const AppOptions& options);
/// tessera-edges (Canny, SPEC "Apps"): Lx, Ly; magnitude; non-maximum suppression (3x3,
/// direction from Lx, Ly); max magnitude (allreduce); double threshold; hysteresis loop;
/// gathers magnitude and edges.
ProgramDescription edges_program(int width, int height, const AppOptions& options);
/// tessera-corners (Harris, SPEC "Apps"): Lx, Ly; A, B, C; their smoothing at rho (a
/// second exchange, 3 images at rho's halo); response; max response (allreduce); 3x3
/// local maxima; gathers the response (the CSV of corners is a few bytes per corner,
/// not priced).
ProgramDescription corners_program(int width, int height, const AppOptions& options);

/// The program of app `name`. Throws InvalidArgument for an unknown name (listing
/// app_names()) or options the app's kernels refuse (sigma, rho, radius).
ProgramDescription app_program(std::string_view name, int width, int height, const AppOptions& options);

}  // namespace tessera::planning
