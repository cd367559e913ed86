#pragma once
// The plans a user would pick without tessera's scheduler, as pure rules: the grid a
// library or the MPI standard would give for P ranks, with that user's algorithms.
// Pure: no MPI.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/partition.hpp"
#include "tessera/plan.hpp"

namespace tessera::validation {

/// The baselines, in the order reports list them:
/// - "mpi-dims": MPI_Dims_create(P, 2) as a row-major Cartesian grid, MPI_Scatterv /
///   MPI_Gatherv (`mpi`) and the paper's `4step` exchange (the naive MPI program);
/// - "petsc-dmda": the grid PETSc's DMDACreate2d picks for PETSC_DECIDE (petsc_dmda_grid),
///   MPI's collectives for scatter and gather and all messages of an exchange posted at
///   once (`nonblocking`), as DMGlobalToLocal does;
/// - "row-strips": 1xP row strips with the library's default algorithms (Plan{}).
inline constexpr std::array<std::string_view, 3> kBaselines{"mpi-dims", "petsc-dmda", "row-strips"};

/// PETSc DMDA's default m x n for an M x N grid on `procs` ranks (DMSetUp_DA_2D in
/// src/dm/impls/da/da2.c, m = n = PETSC_DECIDE): m = round(sqrt(M * procs / N)), at least
/// 1, lowered until it divides procs, n = procs / m; then swapped if M > N and m < n.
/// M runs along the width and m is DMDA's processor count along x, so the result is the
/// grid X = m, Y = n (DMDA's rank order, rank % m along x, is SPEC's). Local.
/// Throws InvalidArgument if width, height or procs < 1.
Grid petsc_dmda_grid(int width, int height, int procs);

/// The plan of baseline `name` for a width x height image on `procs` ranks;
/// `mpi_dims_grid` is the grid MPI_Dims_create gave (the caller asks its MPI; pure code
/// may pass grid_from_dims(balanced_dims(procs))). Throws InvalidArgument on an unknown
/// name. Local.
Plan baseline_plan(std::string_view name, int width, int height, int procs, Grid mpi_dims_grid);

}  // namespace tessera::validation
