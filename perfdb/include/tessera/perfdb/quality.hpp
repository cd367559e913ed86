#pragma once
// Repeatability of a P-3PC run: combining separate measurement passes into one table,
// each cell's spread, and the run's quality verdict. Pure (no SQL, no MPI), local.
//
// A pass visits every cell once through (tessera-bench --repeats K runs K passes).
// A cell's stored median is the median of its pass medians; its spread is
// max / min - 1 of the pass medians (0.05 = the slowest pass was 5 % above the
// fastest). A run's quality is the median and 90th percentile of the spreads of its
// judged cells (is_judged_cell), checked against QualityThresholds.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/perfdb/records.hpp"

namespace tessera::perfdb {

/// Issue 12's repeatability goal: median cell spread <= 5 %, 90 % of cells <= 12 %.
struct QualityThresholds {
  double median = 0.05;  ///< largest median spread that passes (fraction)
  double p90 = 0.12;     ///< largest 90th-percentile spread that passes (fraction)
  double min_us = 1.0;   ///< cells with a smaller median are not judged (timer grain)
};

/// max / min - 1 of `values`; nullopt with fewer than 2 values or a non-positive min.
std::optional<double> spread_of(std::span<const double> values);

/// True for a cell the run's quality is judged on: the paper's shape (cc, or the
/// default 100-block spacing: block_stride_bytes == 0), measured in at least two
/// passes (spread known), median >= t.min_us. Library-shaped cells (tile rows at their
/// real stride, contiguous rows sent once per visit) are single samples after a
/// barrier on purpose, so their pass medians carry the barrier skew and cache state
/// the library meets; they are reported but not judged.
bool is_judged_cell(const P3pcSample& s, const QualityThresholds& t = {});

/// Median and 90th percentile (nearest rank) of the judged cells' spreads, and the
/// verdict. nullopt when no cell is judged (a single pass, or a legacy run).
std::optional<RunQuality> compute_quality(std::span<const P3pcSample> samples,
                                          const QualityThresholds& t = {});

/// Combines passes of the same cells into one table: per cell (level, path, layout,
/// bytes, blocks, stride) the median of the pass medians (mean of the middle two for an
/// even count), the median of the pass quartiles, the summed sample counts, `passes`
/// and `spread`. A cell missing from some passes is combined over the passes that have
/// it. Order: the first pass's, then cells only later passes have.
std::vector<P3pcSample> combine_passes(std::span<const std::vector<P3pcSample>> passes);

/// Passes that deviate systematically from the others: for pass i, the median over its
/// cells (judged by is_judged_cell's shape and size rules) of pass_i / median(other
/// passes) - 1; a pass whose |deviation| exceeds `limit` is disturbed. Needs >= 3
/// passes (with two there is no majority to trust); returns the indices, ascending.
std::vector<std::size_t> disturbed_passes(std::span<const std::vector<P3pcSample>> passes,
                                          double limit = 0.05, const QualityThresholds& t = {});

/// The disturbed pass to measure again: the one whose cells sit furthest above the
/// others' (deviation as disturbed_passes, above `limit`); none when no pass is slower
/// than the others by more than `limit`. A disturbance only ever adds time, so when two
/// passes met a slow state of the machine and one a normal state, the normal one, the
/// lone fast pass, is not the one to redo: each slow pass sits above its others' median
/// too. (Nor when one pass ran faster than two at the usual speed: those two are above
/// their others' median, and a redo may find the faster state as well.) Needs >= 3
/// passes.
std::optional<std::size_t> slowest_disturbed_pass(std::span<const std::vector<P3pcSample>> passes,
                                                  double limit = 0.05, const QualityThresholds& t = {});

/// A disturbed pass measured again: `redo`'s rows, then `old`'s rows of the cells `redo`
/// lacks (a redo cut short by the time budget, or one that measures fewer kinds of
/// cell), in `old`'s order, so no cell the run had is lost by the redo.
std::vector<P3pcSample> replace_pass(std::span<const P3pcSample> old, std::vector<P3pcSample> redo);

/// `q` with the run's P-3PC passes that started in the machine's slow state (the wait
/// for the quiet state ran out of budget) counted: any one fails it, whatever its spread,
/// since a table measured slow throughout repeats as well as a quiet one. nullopt stays.
std::optional<RunQuality> with_slow_passes(std::optional<RunQuality> q, int slow_passes);

/// "median 2.1 % p90 7.9 % over 48 cells: pass" (or "not recorded"), with "(2 pass(es)
/// started in the slow state)" after a failing verdict that has them. Local.
std::string describe_quality(const std::optional<RunQuality>& q);

/// A run the planner may use: its id (higher = newer), recorded quality and the lowest
/// pair latency it read (Run::pair_latency_us).
struct RunChoiceCandidate {
  Id id = 0;
  std::optional<RunQuality> quality;
  std::optional<double> pair_latency_us;
};

/// Which run planning uses and why.
struct RunChoice {
  Id id = 0;
  /// One line for stderr when the choice is a fallback (empty otherwise), e.g. "no run
  /// of machine 'box' passes the repeatability quality (run 9: median 7.1 % ...); using
  /// the newest, run 9".
  std::string fallback_note;
};

/// True when `c` was measured in the machine's slow state: its pair latency reads at
/// least tessera::LatencyWatch::kSlowFactor times `lowest_us`, the lowest any run of the
/// machine read (`lowest_us` <= 0 or no reading: false). A whole launch can start and
/// stay in that state; its lowest reading is then a slow one, it never waited for the
/// quiet state, and its table repeats within itself and passes its quality check.
bool measured_slow(const RunChoiceCandidate& c, double lowest_us);

/// The newest candidate whose quality passes and that was not measured in the slow
/// state (measured_slow against the candidates' lowest pair latency); else the newest
/// whose quality passes, with a note that every passing run was measured slow; else the
/// newest candidate, with a fallback note naming its quality ("not recorded" for runs
/// written before quality existed, or with a single pass). A passing run newer than the
/// choice but measured slow is named in the note. Precondition: `candidates` not empty.
RunChoice choose_run(std::span<const RunChoiceCandidate> candidates, const std::string& machine);

}  // namespace tessera::perfdb
