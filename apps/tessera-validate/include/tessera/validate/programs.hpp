#pragma once
// The apps' programs (tessera::Program) as tessera-validate runs and prices them: which
// program, which plans cover every algorithm, and the scheduler's phases grouped the
// way Program::run(..., PhaseSeconds*) times them. Pure: no MPI.
#include <map>
#include <string>
#include <vector>

#include "tessera/plan.hpp"
#include "tessera/program.hpp"
#include "tessera/program_description.hpp"
#include "tessera/scheduler/program.hpp"

namespace tessera::validation {

/// App `app`'s program ("gauss": the derivative pipeline, derivatives_program, as
/// tessera-gauss and gaussian_derivatives run it; "edges" or "corners": the very function
/// the app runs), SPEC's defaults but the derivative scale `sigma`. Throws
/// InvalidArgument for another name.
Program app_program(const std::string& app, double sigma);

/// Per step of `program`: whether it runs inside an iterative operation's loop
/// (repeat_first .. the step with expected_rounds > 0).
std::vector<bool> in_loop(const ProgramDescription& program);

/// Whether a loop holds an exchange: Program::run times an iterative operation (its
/// exchange rounds included) as compute, so that compute then depends on the exchange
/// algorithm.
bool exchanges_in_compute(const ProgramDescription& program);

/// `cost` (price_program of `program`) grouped as Program::run(..., PhaseSeconds*)
/// measures a run: scatter; exchange = the exchange steps outside loops; compute = the
/// compute and reduce steps and every step of an iterative operation's loop (its
/// exchanges and "changed?" reductions); gather. reduce is 0 (folded into compute),
/// total is cost's (the same sum).
scheduler::PhaseMicros as_measured(const ProgramDescription& program, const scheduler::ProgramCost& cost);

/// Plans of `grid` that between them run every scatter, gather and exchange algorithm:
/// the i-th takes the i-th algorithm of each kind (cyclically), as many plans as the
/// largest kind has algorithms, so each exchange algorithm runs in at least two.
std::vector<Plan> covering_plans(Grid grid);

/// Rounds the iterative operations of `program` ran, from a run's communication trace
/// (ProgramResults::communication): records of each loop end's kind and operation,
/// less those the description has outside loops. One entry per loop, in order.
std::vector<int> loop_rounds(const ProgramDescription& program,
                             const std::vector<ProgramStep>& communication);

/// The rounds loop `loop` ran on each grid (`by_grid`: grid name -> loop_rounds of one of
/// its runs) as a note says them: "2" when every grid ran as many, else "2 (1x2), 3 (2x1)";
/// empty when no grid has that loop.
std::string rounds_ran(const std::map<std::string, std::vector<int>>& by_grid, std::size_t loop);

}  // namespace tessera::validation
