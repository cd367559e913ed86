#include "tessera/validate/baselines.hpp"

#include <cmath>
#include <utility>

#include "tessera/error.hpp"
#include "tessera/validate/analysis.hpp"

namespace tessera::validation {

Grid petsc_dmda_grid(int width, int height, int procs) {
  if (width < 1 || height < 1 || procs < 1)
    throw InvalidArgument("petsc_dmda_grid needs a positive image size and rank count");
  // PETSc's "try for squarish distribution", in its own arithmetic (double, truncation).
  int m = int(0.5 + std::sqrt(double(width) * double(procs) / double(height)));
  if (m < 1) m = 1;
  int n = procs;
  while (m > 0) {
    n = procs / m;
    if (m * n == procs) break;
    --m;
  }
  if (width > height && m < n) std::swap(m, n);
  return Grid{m, n};
}

Plan baseline_plan(std::string_view name, int width, int height, int procs, Grid mpi_dims_grid) {
  if (name == "mpi-dims") return baseline_plan(mpi_dims_grid);
  if (name == "petsc-dmda")
    return Plan{petsc_dmda_grid(width, height, procs), ScatterAlgorithm::mpi, GatherAlgorithm::mpi,
                ExchangeAlgorithm::nonblocking};
  if (name == "row-strips") {
    Plan p;  // the library's defaults
    p.grid = Grid{1, procs};
    return p;
  }
  throw InvalidArgument("unknown baseline '" + std::string(name) + "'");
}

}  // namespace tessera::validation
