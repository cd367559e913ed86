#include "tessera/planning/planning.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "tessera/detail/buffer_cache.hpp"
#include "tessera/error.hpp"
#include "tessera/perfdb/interchange.hpp"
#include "tessera/perfdb/primitives.hpp"
#include "tessera/perfdb/quality.hpp"
#include "tessera/perfdb/store.hpp"
#include "tessera/statistics.hpp"

namespace tessera::planning {

namespace detail {
const std::string& default_machine_csv_text();
}

namespace {

using scheduler::Level;
using scheduler::PiecewiseLinear;

Level level_of(perfdb::Level l) { return l == perfdb::Level::intra ? Level::intra : Level::inter; }

// P-3PC tables of one run. The benchmarker measures the paper's noncontiguous shape
// (100 blocks) and, besides, messages shaped as the library sends them (many rows of
// one length: a tile's rows, a halo's). The two families must not share a curve (it
// would zigzag between them): the paper's shape makes the base curves, and the
// library-shaped samples one row family per row length, which p3pc prefers for
// messages whose row length it knows (P3pcTable::time_us).
bool fill_p3pc(scheduler::MachineParams& m, const perfdb::RunData& run, std::vector<std::string>& notes) {
  using Key = std::pair<int, int>;  // (level, path * 4 + layout)
  std::map<Key, std::vector<std::pair<double, double>>> base, any;
  std::map<std::pair<int, long long>, std::map<int, std::vector<std::pair<double, double>>>>
      rows;  // (level, row bytes)
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> library_cc;  // (level, path)
  for (const auto& s : run.p3pc) {
    const int lv = int(level_of(s.level)), curve = int(s.path) * 4 + int(s.layout);
    const bool contiguous = s.layout == Layout::cc;
    const bool paper = contiguous ? s.blocks <= 1 || s.block_stride_bytes == 0
                                  : s.blocks == 100 && s.block_stride_bytes == 0;
    const std::pair<double, double> pt{double(s.bytes), s.median_us};
    any[{lv, curve}].push_back(pt);
    if (paper)
      base[{lv, curve}].push_back(pt);
    else if (!contiguous && s.blocks > 1 && s.block_stride_bytes > 0 && s.bytes % s.blocks == 0)
      rows[{lv, (long long)(s.bytes / s.blocks)}][curve].push_back(pt);
    else if (contiguous)
      library_cc[{lv, int(s.path)}].push_back(pt);
  }
  for (auto& [key, pts] : library_cc)
    m.p3pc[std::size_t(key.first)].library_cc[std::size_t(key.second)] = PiecewiseLinear(std::move(pts));
  for (auto& [key, pts] : any) {
    auto it = base.find(key);
    // A curve measured only in library shapes still needs a base: all its samples.
    m.p3pc[std::size_t(key.first)].curves[std::size_t(key.second)] =
        PiecewiseLinear(it != base.end() ? std::move(it->second) : std::move(pts));
  }
  std::size_t families = 0;
  for (auto& [key, curves] : rows) {  // ascending row length within a level
    scheduler::P3pcRowFamily f;
    f.row_bytes = double(key.second);
    for (auto& [curve, pts] : curves) f.curves[std::size_t(curve)] = PiecewiseLinear(std::move(pts));
    m.p3pc[std::size_t(key.first)].row_families.push_back(std::move(f));
    ++families;
  }
  if (families == 0 && !any.empty())
    notes.push_back(
        "no library-shaped P-3PC samples: noncontiguous messages priced with the paper's 100-block "
        "shape (rerun tessera-bench)");
  return !any.empty();
}

void fill_log3p(scheduler::MachineParams& m, const perfdb::RunData& run) {
  std::map<std::pair<int, std::string>, std::vector<std::pair<double, double>>> pts;
  for (const auto& p : run.log3p) {
    if (p.name != perfdb::kLog3pOmw && p.name != perfdb::kLog3pLmw && p.name != perfdb::kLog3pOnet) continue;
    // l_mw is kept for strided transfers only; averaged over strides at equal sizes.
    if (p.name == perfdb::kLog3pLmw && p.stride_bytes == 0) continue;
    pts[{int(level_of(p.level)), p.name}].emplace_back(double(p.size_bytes), p.value_us);
  }
  for (auto& [key, v] : pts) {
    auto& lv = m.log3p[std::size_t(key.first)];
    PiecewiseLinear f(std::move(v));
    if (key.second == perfdb::kLog3pOmw)
      lv.o_mw = f;
    else if (key.second == perfdb::kLog3pLmw)
      lv.l_mw = f;
    else
      lv.o_net = f;
  }
  for (auto& lv : m.log3p)
    if (lv.o_mw.empty()) lv = {};  // without the overhead the rest is unusable: derive instead
}

void fill_loggp(scheduler::MachineParams& m, const perfdb::RunData& run) {
  for (const auto& r : run.loggp)
    m.loggp[int(level_of(r.level))].push_back(
        {double(r.from_bytes), r.L_us, (r.o_s_us + r.o_r_us) / 2, r.g_us, r.G_us_per_byte});
}

}  // namespace

std::optional<scheduler::PrimitivePoint> primitive_point_of(const perfdb::ComputeCost& c) {
  scheduler::PrimitivePoint p;
  std::string_view operation = c.operation;
  const std::string_view suffix = perfdb::kComputeFromMemorySuffix;
  if (operation.ends_with(suffix)) {
    operation.remove_suffix(suffix.size());
    p.from_memory = true;
  }
  const auto primitive = perfdb::primitive_of(operation);
  if (!primitive) return std::nullopt;
  p.primitive = *primitive;
  if (c.taps < 1 || c.tile_width < 1 || c.tile_height < 1 || !(c.ns_per_pixel >= 0) ||
      !std::isfinite(c.ns_per_pixel) || (c.threads && *c.threads < 1))
    return std::nullopt;
  if (p.primitive == Primitive::separable && c.axis != "x" && c.axis != "y") return std::nullopt;
  p.axis = c.axis == "y" ? 1 : 0;
  p.size = c.taps;
  p.threads = c.threads.value_or(1);
  p.tile_width = c.tile_width;
  p.tile_height = c.tile_height;
  p.ns_per_pixel = c.ns_per_pixel;
  return p;
}

namespace {

// Compute costs of one run. Whole-pipeline rows ("derivatives": compute_derivatives
// timed per sigma, tile and thread count) price the compute when present; single
// filter-pass rows, all that runs before schema 3 have, only when there are none.
// Primitive rows (kComputePixelwise ...) price a program's compute steps.
scheduler::ComputeTable compute_of(const perfdb::RunData& run) {
  std::vector<scheduler::ComputePoint> passes;
  std::vector<scheduler::PipelinePoint> pipeline;
  std::vector<scheduler::PrimitivePoint> primitives;
  for (const auto& c : run.compute) {
    if (c.taps < 1 || c.tile_width < 1 || c.tile_height < 1 || !(c.ns_per_pixel >= 0)) continue;
    if (auto p = primitive_point_of(c)) {
      primitives.push_back(*p);
      continue;
    }
    if (c.operation == perfdb::kComputeDerivatives) {
      if (c.threads && *c.threads < 1) continue;
      // No thread count recorded: one thread, as the single-pass benchmark ran.
      pipeline.push_back({c.taps, c.threads.value_or(1), c.tile_width, c.tile_height, c.ns_per_pixel});
      continue;
    }
    if (c.axis != "x" && c.axis != "y") continue;
    // The benchmarker names odd-order (antisymmetric) passes "filter_odd".
    if (c.operation != perfdb::kComputeFilter && c.operation != perfdb::kComputeFilterOdd) continue;
    passes.push_back({c.axis == "x" ? 0 : 1, c.taps, c.tile_width, c.tile_height, c.ns_per_pixel,
                      c.operation == perfdb::kComputeFilterOdd});
  }
  if (!pipeline.empty()) passes.clear();
  return scheduler::ComputeTable(std::move(passes), std::move(pipeline), std::move(primitives));
}

// A row timed per float (copies, mirroring) as a fit sample: rows, floats per row, µs;
// none for a row out of range.
std::optional<scheduler::CopySample> copy_sample(const perfdb::ComputeCost& c) {
  if (c.tile_width < 1 || c.tile_height < 1 || !std::isfinite(c.ns_per_pixel) || c.ns_per_pixel <= 0)
    return std::nullopt;
  return scheduler::CopySample{double(c.tile_height), double(c.tile_width),
                               c.ns_per_pixel * double(c.tile_width) * double(c.tile_height) / 1000.0};
}

// How many row widths the samples measured.
std::size_t row_widths(const std::vector<scheduler::CopySample>& samples) {
  std::set<double> widths;
  for (const auto& s : samples) widths.insert(s.row_floats);
  return widths.size();
}

// A per-run row's time (phase_call, phase_call_after: ns per run) in µs; none when not
// positive and finite.
std::optional<double> call_us_of(const perfdb::ComputeCost& c) {
  if (!std::isfinite(c.ns_per_pixel) || c.ns_per_pixel <= 0) return std::nullopt;
  return c.ns_per_pixel / 1000.0;
}

// The executor's fixed cost of one plan run (the run's "phase_call" row), ns; 0 when the
// run has none (runs before it) or it is not positive and finite.
double phase_call_ns(const perfdb::RunData& run) {
  double ns = 0;
  for (const auto& c : run.compute)
    if (c.operation == perfdb::kComputePhaseCall && call_us_of(c)) ns = c.ns_per_pixel;
  return ns;
}

// The library's local copies (operation "copy": rows x floats per row, ns per float),
// priced per row width as measured (scheduler::measured_copy_cost). Empty when the run
// has fewer than two widths.
scheduler::CopyCost copy_of(const perfdb::RunData& run) {
  std::vector<scheduler::CopySample> samples;
  for (const auto& c : run.compute)
    if (c.operation == perfdb::kComputeCopy)
      if (auto sample = copy_sample(c)) samples.push_back(*sample);
  scheduler::CopyCost out =
      row_widths(samples) < 2 ? scheduler::CopyCost{} : scheduler::measured_copy_cost(samples);
  // The executor's fixed cost per plan run (runs before it: none measured, 0).
  out.call_us = phase_call_ns(run) / 1000.0;
  return out;
}

// The copies as a pipeline leaves them (operation "copy_after", taps = MiB touched
// elsewhere since), priced as measured per distance, ascending, with the x-mirror's fit
// ("mirror_after") and the executor's fixed cost ("phase_call_after") at that distance
// when measured. A distance with a fixed cost alone (tessera-bench times it at 256 MiB,
// beyond its last copy distance, where it still grows) gets the copies of the distance
// before it, as the scheduler would hold them there; a copy distance beyond the last
// fixed cost holds that fixed cost. Empty when the run has none (runs
// before them) or a distance has fewer than two copy widths.
std::vector<scheduler::CopyAtDistance> copy_after_of(const perfdb::RunData& run) {
  struct AtDistance {
    std::vector<scheduler::CopySample> copies, mirrors;
    double call_us = 0;
  };
  std::map<int, AtDistance> by_distance;
  for (const auto& c : run.compute) {
    if (c.taps < 1) continue;
    if (c.operation == perfdb::kComputeCopyAfter || c.operation == perfdb::kComputeMirrorAfter) {
      if (auto sample = copy_sample(c))
        (c.operation == perfdb::kComputeCopyAfter ? by_distance[c.taps].copies : by_distance[c.taps].mirrors)
            .push_back(*sample);
    } else if (c.operation == perfdb::kComputePhaseCallAfter) {
      if (auto us = call_us_of(c)) by_distance[c.taps].call_us = *us;
    }
  }
  std::vector<scheduler::CopyAtDistance> out;
  for (const auto& [mib, at] : by_distance) {
    if (at.copies.empty() && at.mirrors.empty()) {
      if (out.empty() || !(at.call_us > 0)) continue;
      scheduler::CopyAtDistance held = out.back();
      held.bytes = double(mib) * double(1 << 20);
      held.cost.call_us = at.call_us;
      out.push_back(held);
      continue;
    }
    if (row_widths(at.copies) < 2) return {};
    scheduler::CopyAtDistance d{double(mib) * double(1 << 20), scheduler::measured_copy_cost(at.copies)};
    if (at.mirrors.size() >= 2) {
      const scheduler::CopyCost m = scheduler::fit_copy_cost(at.mirrors);
      d.cost.mirror_row_ns = m.per_row_ns;
      d.cost.mirror_float_ns = m.per_float_ns;
    }
    // A copy distance past the fixed cost's last (full runs time copies on to the
    // last-level cache, the fixed cost to 256 MiB) holds the fixed cost before it.
    d.cost.call_us = at.call_us > 0 || out.empty() ? at.call_us : out.back().cost.call_us;
    out.push_back(d);
  }
  return out;
}

// Per square tile side, its samples at two halos or more: rows x (per row + halo floats
// x per float) fitted, ascending tile size.
std::vector<scheduler::FreshMirror> fit_fresh_mirrors(const std::map<int, std::vector<scheduler::CopySample>>& by_side) {
  std::vector<scheduler::FreshMirror> out;
  for (const auto& [side, samples] : by_side) {
    if (row_widths(samples) < 2) continue;
    const scheduler::CopyCost m = scheduler::fit_copy_cost(samples);
    out.push_back({double(side) * double(side), m.per_row_ns, m.per_float_ns});
  }
  return out;
}

// The x-mirror on tiles just written whole, as runs before the thirteenth session
// measured it (operation "mirror_fresh", taps = the square tile's side), in one state.
// Empty when the run has none.
std::vector<scheduler::FreshMirror> fresh_mirrors_of(const perfdb::RunData& run) {
  std::map<int, std::vector<scheduler::CopySample>> by_side;
  for (const auto& c : run.compute)
    if (c.operation == perfdb::kComputeMirrorFresh && c.taps >= 1)
      if (auto sample = copy_sample(c)) by_side[c.taps].push_back(*sample);
  return fit_fresh_mirrors(by_side);
}

// The same, the tile written after `taps` MiB were swept (operation
// "mirror_fresh_after", side = tile_height / 2), per distance, ascending; a distance
// whose tiles give no fit is left out. Empty when the run has none.
std::vector<scheduler::FreshMirrorsAt> fresh_mirrors_after_of(const perfdb::RunData& run) {
  std::map<int, std::map<int, std::vector<scheduler::CopySample>>> by_distance;  // MiB -> side -> samples
  for (const auto& c : run.compute)
    if (c.operation == perfdb::kComputeMirrorFreshAfter && c.taps >= 1 && c.tile_height >= 2)
      if (auto sample = copy_sample(c)) by_distance[c.taps][c.tile_height / 2].push_back(*sample);
  std::vector<scheduler::FreshMirrorsAt> out;
  for (const auto& [mib, by_side] : by_distance)
    if (auto fit = fit_fresh_mirrors(by_side); !fit.empty()) out.push_back({double(mib) * double(1 << 20), fit});
  return out;
}

// First touch of fresh buffers (operation "first_touch": tile_width bytes mapped, ns
// per byte): the median of the rows below 2 MiB and of those from 2 MiB, where the
// executor's pool advises huge pages. Empty when the run has none (runs before it).
scheduler::FirstTouchCost first_touch_of(const perfdb::RunData& run) {
  std::vector<double> small, huge;
  for (const auto& c : run.compute)
    if (c.operation == perfdb::kComputeFirstTouch && c.tile_width > 0 && std::isfinite(c.ns_per_pixel))
      (std::size_t(c.tile_width) >= tessera::detail::kHugePageBytes ? huge : small)
          .push_back(std::max(0.0, c.ns_per_pixel));
  scheduler::FirstTouchCost out;
  if (!small.empty()) out.small_ns_per_byte = stats::median(small);
  if (!huge.empty()) out.huge_ns_per_byte = stats::median(huge);
  return out;
}

// The copy out of the user's image (operation "scatter_image": ns per one-rank scatter
// phase of a square input image `tile`) less the plain phase_call, per float, ascending
// pixels. Empty when the run has none (runs before them) or none is above the call.
scheduler::ImageCopy image_copy_of(const perfdb::RunData& run) {
  std::map<double, double> ns;  // image pixels -> ns per phase
  const double call_ns = phase_call_ns(run);
  for (const auto& c : run.compute)
    if (c.operation == perfdb::kComputeScatterImage && std::isfinite(c.ns_per_pixel) && c.ns_per_pixel > 0 &&
        c.tile_width >= 1 && c.tile_height >= 1)
      ns[double(c.tile_width) * double(c.tile_height)] = c.ns_per_pixel;
  scheduler::ImageCopy out;
  for (const auto& [pixels, phase_ns] : ns)
    if (phase_ns > call_ns) out.by_size.push_back({pixels, (phase_ns - call_ns) / pixels});
  return out;
}

// A result's copy out of its haloed tile into the result image (operation
// "gather_image": ns per one-rank gather phase of such a result of a square input
// `tile`) less the one-result gather_results phase of the same image (its plan's call
// and bookkeeping), per float, ascending pixels. Empty when the run has none (runs
// before them) or no size has both rows with the first dearer.
scheduler::ImageCopy result_copy_of(const perfdb::RunData& run) {
  std::map<double, std::pair<double, double>> ns;  // image pixels -> (haloed, in place) ns per phase
  for (const auto& c : run.compute) {
    if (!std::isfinite(c.ns_per_pixel) || c.ns_per_pixel <= 0 || c.tile_width < 1 || c.tile_height < 1)
      continue;
    const double pixels = double(c.tile_width) * double(c.tile_height);
    if (c.operation == perfdb::kComputeGatherImage) ns[pixels].first = c.ns_per_pixel;
    if (c.operation == perfdb::kComputeGatherResults && c.taps == 1) ns[pixels].second = c.ns_per_pixel;
  }
  scheduler::ImageCopy out;
  for (const auto& [pixels, phase] : ns)
    if (phase.first > 0 && phase.second > 0 && phase.first > phase.second)
      out.by_size.push_back({pixels, (phase.first - phase.second) / pixels});
  return out;
}

// A gather phase's bookkeeping (operation "gather_results": ns per one-rank gather phase
// of `taps` results in place, on an input image of `tile`; 1x1 in runs before the
// thirteenth session) less the plain phase_call per result, linear through the fewest
// and the most results measured, per image size measured with two counts or more (the
// smallest in one_us / each_more_us). Empty when no size has two counts.
scheduler::GatherBookkeeping gather_bookkeeping_of(const perfdb::RunData& run) {
  std::map<double, std::map<int, double>> ns;  // image pixels -> results -> ns per phase
  const double call_ns = phase_call_ns(run);
  for (const auto& c : run.compute)
    if (c.operation == perfdb::kComputeGatherResults && std::isfinite(c.ns_per_pixel) && c.ns_per_pixel > 0 &&
        c.taps >= 1 && c.tile_width >= 1 && c.tile_height >= 1)
      ns[double(c.tile_width) * double(c.tile_height)][c.taps] = c.ns_per_pixel;
  scheduler::GatherBookkeeping b;
  for (const auto& [pixels, by_results] : ns) {
    if (by_results.size() < 2) continue;
    const auto [k0, t0] = *by_results.begin();
    const auto [k1, t1] = *by_results.rbegin();
    const double each_ns = (t1 - t0) / double(k1 - k0);
    b.by_size.push_back({pixels, (t0 - double(k0 - 1) * each_ns - call_ns) / 1000.0, (each_ns - call_ns) / 1000.0});
  }
  if (b.by_size.empty()) return {};
  b.one_us = b.by_size.front().one_us;
  b.each_more_us = b.by_size.front().each_more_us;
  // One size (older runs: 1x1, its size not recorded) prices every image alike.
  if (b.by_size.size() == 1) b.by_size.clear();
  return b;
}

// A thread pool's wake-up (operation "thread_wake": taps = idle gap µs, ns per step,
// `threads`): the rows of the most threads, by gap. Empty when the run has none.
scheduler::ThreadWake thread_wake_of(const perfdb::RunData& run) {
  int most = 0;
  for (const auto& c : run.compute)
    if (c.operation == perfdb::kComputeThreadWake && c.threads) most = std::max(most, *c.threads);
  std::map<double, double> by_gap;
  for (const auto& c : run.compute)
    if (c.operation == perfdb::kComputeThreadWake && c.threads == most && c.taps >= 1 &&
        std::isfinite(c.ns_per_pixel) && c.ns_per_pixel >= 0)
      by_gap[double(c.taps)] = c.ns_per_pixel / 1000.0;
  scheduler::ThreadWake w;
  if (by_gap.empty()) return w;
  w.threads = most;
  w.by_gap = scheduler::PiecewiseLinear(std::vector<std::pair<double, double>>(by_gap.begin(), by_gap.end()));
  return w;
}

// How the node's CPU quota stops it when busy (operations "quota_stop" and "quota_run",
// ns each): the medians in µs into the placement; left at 0 when the run has neither.
void fill_quota_cycle(scheduler::Placement& p, const perfdb::RunData& run) {
  for (const auto& c : run.compute) {
    const bool stop = c.operation == perfdb::kComputeQuotaStop, go = c.operation == perfdb::kComputeQuotaRun;
    if ((stop || go) && std::isfinite(c.ns_per_pixel) && c.ns_per_pixel > 0)
      (stop ? p.quota_stop_us : p.quota_run_us) = c.ns_per_pixel / 1000.0;
  }
}

// The copies timed on several ranks of one node at once (operation
// "copy_after_together", taps = MiB each rank swept, threads = ranks), by the bytes the
// node touched in all (taps x ranks, as the scheduler's run footprint counts a node's
// ranks together), ascending. Empty when the run has none or a distance has fewer than
// two copy widths.
std::vector<scheduler::CopyAtDistance> copy_after_together_of(const perfdb::RunData& run) {
  std::map<double, std::vector<scheduler::CopySample>> by_bytes;
  for (const auto& c : run.compute)
    if (c.operation == perfdb::kComputeCopyAfterTogether && c.taps >= 1 && c.threads && *c.threads >= 2)
      if (auto sample = copy_sample(c)) by_bytes[double(c.taps) * double(1 << 20) * *c.threads].push_back(*sample);
  std::vector<scheduler::CopyAtDistance> out;
  for (const auto& [bytes, samples] : by_bytes) {
    if (row_widths(samples) < 2) return {};
    out.push_back({bytes, scheduler::measured_copy_cost(samples)});
  }
  return out;
}

// Everything a run's compute rows give the models: compute, the local copies (in one
// state, after each reuse distance and out of the user's image), first touch, a
// gather's bookkeeping and the thread pool's wake-up.
void fill_local_work(scheduler::MachineParams& m, const perfdb::RunData& run) {
  m.compute = compute_of(run);
  m.copy = copy_of(run);
  m.copy_after = copy_after_of(run);
  m.copy_after_together = copy_after_together_of(run);
  // An exchange's mirroring meets its tile right after the copy that wrote it, and what
  // that copy leaves in the caches depends on what the run streamed before it: priced at
  // each copy state's distance when measured so (the single state: the nearest
  // distance); older runs measured one state, which then prices every distance.
  if (const auto after = fresh_mirrors_after_of(run); !after.empty()) {
    m.copy.fresh_mirrors = after.front().sizes;
    for (auto& d : m.copy_after) d.cost.fresh_mirrors = scheduler::fresh_mirrors_at(after, d.bytes);
  } else {
    const auto fresh = fresh_mirrors_of(run);
    m.copy.fresh_mirrors = fresh;
    for (auto& d : m.copy_after) d.cost.fresh_mirrors = fresh;
  }
  m.first_touch = first_touch_of(run);
  m.gather_bookkeeping = gather_bookkeeping_of(run);
  m.image_copy = image_copy_of(run);
  m.result_copy = result_copy_of(run);
  m.thread_wake = thread_wake_of(run);
  for (const auto& c : run.compute)
    if (c.operation == perfdb::kComputeLastLevelCache && std::isfinite(c.ns_per_pixel) && c.ns_per_pixel > 0)
      m.cache_bytes = c.ns_per_pixel * 1024.0 * 1024.0;
  fill_quota_cycle(m.placement, run);
}

struct Found {
  std::optional<perfdb::RunData> comm;     // the complete P-3PC run perfdb::choose_run picks
  std::optional<perfdb::RunData> compute;  // newest complete run with compute costs
  perfdb::Machine machine;
  std::string comm_note;  // which run serves P-3PC and its quality (one line)
};

std::optional<Found> find_in_store(const perfdb::Store& store, const std::string& name) {
  const auto machine = store.find_machine(name);
  if (!machine) return std::nullopt;
  Found f;
  f.machine = *machine;
  auto runs = store.list_runs(machine->id);
  // P-3PC: the newest complete run whose repeatability quality passes and that was not
  // measured in the machine's slow state, else the newest that passes, else the newest.
  std::vector<perfdb::RunChoiceCandidate> candidates;
  for (const auto& r : runs)
    if (r.status == perfdb::RunStatus::complete && store.count_p3pc(r.id) > 0)
      candidates.push_back({r.id, r.quality, r.pair_latency_us});
  if (!candidates.empty()) {
    const auto choice = perfdb::choose_run(candidates, name);
    f.comm = store.load_run(choice.id);
    f.comm_note = !choice.fallback_note.empty()
                      ? choice.fallback_note
                      : "P-3PC parameters from run " + std::to_string(choice.id) + " (quality " +
                            perfdb::describe_quality(f.comm->run.quality) + ")";
  }
  for (auto it = runs.rbegin(); it != runs.rend() && !f.compute; ++it) {
    if (it->status != perfdb::RunStatus::complete) continue;
    if (f.comm && it->id == f.comm->run.id) {
      if (!f.comm->compute.empty()) f.compute = f.comm;
      continue;
    }
    auto data = store.load_run(it->id);
    if (!data.compute.empty()) f.compute = std::move(data);
  }
  return f;
}

std::string describe_run(const std::filesystem::path& db, const perfdb::Run& r) {
  return "perfdb " + db.string() + " run " + std::to_string(r.id) + " (" + r.tool + ", " + r.started_at + ")";
}

}  // namespace

scheduler::ComputeTable compute_table_of(const perfdb::RunData& run) { return compute_of(run); }

const std::string& bundled_default_csv() { return detail::default_machine_csv_text(); }

scheduler::MachineParams bundled_default_machine() {
  scheduler::MachineParams m;
  m.name = "bundled-default (P-3PC paper Table 1, DAS)";
  m.p3pc[int(Level::inter)] = scheduler::parse_p3pc_csv(std::string_view(bundled_default_csv()));
  m.placement.ranks_per_node = 1;
  return m;
}

LoadedMachine load_machine(const std::optional<std::string>& perfdb_path,
                           const std::optional<std::string>& machine) {
  const std::string host = perfdb::local_machine().name;
  const std::string name = machine && !machine->empty() ? *machine : host;
  const bool this_host = name == host;
  const auto db = perfdb::resolve_perfdb_path(perfdb_path);

  // Only the per-user default database may be absent (a first run: the bundled table
  // with a note). A database the user named, or one that exists, is opened read-only,
  // and any failure to read it is the user's error with its reason, never a fallback.
  std::error_code ec;
  const bool absent = !std::filesystem::exists(db, ec) &&
                      (!ec || ec == std::errc::no_such_file_or_directory);
  std::optional<perfdb::Store> store;
  if (perfdb::perfdb_path_is_named(perfdb_path) || !absent)
    store.emplace(db, perfdb::Store::Mode::read_only);

  LoadedMachine out;
  std::optional<Found> found;
  if (store) {
    found = find_in_store(*store, name);
    if (!found || !found->comm)
      throw InvalidArgument("machine '" + name + "' has no P-3PC measurements in perfdb " + db.string() +
                            (this_host ? " (measure it: mpirun -n 2 tessera-bench --quick)"
                                       : " (import a table with tessera-perfdb import --csv FILE --machine " +
                                             name + ")"));
  } else if (!this_host) {
    throw InvalidArgument("machine '" + name + "': no perfdb at " + db.string() +
                          " (import a table with tessera-perfdb import --csv FILE --machine " + name +
                          ", or pass --perfdb PATH)");
  }

  if (found && found->comm) {
    auto& m = out.params;
    m.name = name;
    fill_p3pc(m, *found->comm, out.notes);
    fill_log3p(m, *found->comm);
    fill_loggp(m, *found->comm);
    const bool intra = !m.p3pc[int(Level::intra)].empty(), inter = !m.p3pc[int(Level::inter)].empty();
    // Placement for the planned job (block, as mpirun fills nodes): a one-node machine
    // holds every rank; a cluster gets as many ranks per node as it has cores (the
    // benchmark's own ranks per node only says how the measurement job was laid out);
    // with nothing known, a table of inter-node pairs only means one rank per node.
    const auto& rec = found->machine;
    if (rec.nodes == 1 || !inter)
      m.placement.ranks_per_node = 0;
    else if (rec.cores > 0)
      m.placement.ranks_per_node = rec.cores;
    else if (intra && rec.ranks_per_node > 0)
      m.placement.ranks_per_node = rec.ranks_per_node;
    else
      m.placement.ranks_per_node = 1;
    m.placement.cores_per_node = std::max(0, found->machine.cores);
    m.placement.cpu_quota = std::max(0.0, found->machine.cpu_quota);
    m.placement.cpu_period_us = std::max(0.0, found->machine.cpu_period_us);
    out.origin = describe_run(db, found->comm->run);
    out.p3pc_run = found->comm->run.id;
    out.quiet_pair_latency_us = store->quiet_pair_latency_us(name);
    out.p3pc_quality = found->comm->run.quality;
    out.notes.push_back(found->comm_note);
    for (Level lv : {Level::intra, Level::inter})
      if (!m.p3pc[int(lv)].empty() && !m.p3pc[int(lv)].complete())
        out.notes.push_back("machine '" + name + "': the " + std::string(to_string(lv)) +
                            " P-3PC table lacks some path/layout curves; p3pc needs all twelve");
  } else {
    out.params = bundled_default_machine();
    out.bundled_default = true;
    out.origin = "bundled default (P-3PC paper Table 1, DAS cluster 2001) — a placeholder, not this machine";
    out.notes.push_back("no perfdb at " + db.string() + " for this machine (" + name +
                        "); using bundled default P-3PC table (paper's DAS numbers); run tessera-bench to "
                        "measure this machine");
  }

  if (found && found->compute) {
    fill_local_work(out.params, *found->compute);
    out.compute_source = "measured";
  }
  if (out.params.compute.empty() && !this_host && store) {
    if (auto local = find_in_store(*store, host); local && local->compute) {
      fill_local_work(out.params, *local->compute);
      out.compute_source = "borrowed from this machine (" + host + ")";
      out.notes.push_back("machine '" + name +
                          "' has no compute measurements; compute priced with this machine's (" + host + ")");
    }
  }
  {
    const auto& c = out.params.compute;
    std::string older;
    for (Primitive p : {Primitive::nms, Primitive::local_max, Primitive::hysteresis})
      if (c.has_own_primitive(Primitive::neighbourhood) && !c.has_own_primitive(p))
        older += (older.empty() ? "" : ", ") + std::string(to_string(p));
    if (!older.empty())
      out.notes.push_back("no " + older + " measurements: priced as a 3x3 filter, far cheaper than their own kernels "
                          "(rerun tessera-bench)");
    if (c.has_own_primitive(Primitive::hysteresis) && !c.has_own_primitive(Primitive::hysteresis_growth))
      out.notes.push_back(
          "no hysteresis_growth measurements: hysteresis is priced at its rows' mean of three rounds, the growing "
          "in them, on every grid alike (rerun tessera-bench)");
    std::string sweeps;
    for (Primitive p : {Primitive::extremum, Primitive::count})
      if (c.has_own_primitive(Primitive::reduction) && !c.has_own_primitive(p))
        sweeps += (sweeps.empty() ? "" : ", ") + std::string(to_string(p));
    if (!sweeps.empty())
      out.notes.push_back("no " + sweeps + " measurements: priced as the exact sum's sweep, several times dearer "
                          "than their own (rerun tessera-bench)");
    if (c.has_own_primitive(Primitive::pixelwise) &&
        (!c.has_from_memory(Primitive::pixelwise) || !(out.params.cache_bytes > 0)))
      out.notes.push_back(
          "no from-memory primitive measurements: a program's compute steps are priced with its images in the "
          "caches whatever its footprint, low for large images (rerun tessera-bench)");
  }
  if (out.params.first_touch.empty() && !out.params.compute.empty())
    out.notes.push_back(
        "no first-touch measurements: the page faults of a process's first run are unpriced (rerun "
        "tessera-bench)");
  if (!out.params.copy.empty() && out.params.copy_after.empty())
    out.notes.push_back(
        "no copy_after measurements: the local copies are priced in one cache state whatever the run's "
        "footprint, low for large images (rerun tessera-bench)");
  if (out.params.gather_bookkeeping.empty() && !out.params.compute.empty())
    out.notes.push_back(
        "no gather_results measurements: a gather's bookkeeping on the root (naming its results) is unpriced "
        "(rerun tessera-bench)");
  if (out.params.image_copy.empty() && !out.params.copy.empty())
    out.notes.push_back(
        "no scatter_image measurements: the scatter's copy out of the user's image is priced as the run's "
        "other copies, low from 1024² on (rerun tessera-bench)");
  if (out.params.result_copy.empty() && !out.params.copy.empty())
    out.notes.push_back(
        "no gather_image measurements: a gather's copy of a result out of its haloed tile into the result "
        "image is priced as the run's other copies out of the outputs, low from 1024² on (rerun "
        "tessera-bench)");
  if (out.params.copy.empty())
    out.notes.push_back(
        "no copy measurements: the library's local copies around messages are unpriced (rerun "
        "tessera-bench)");
  if (out.params.compute.empty()) {
    out.compute_source = "unpriced";
    out.notes.push_back(
        "no compute measurements: compute is unpriced (0); the plan weighs communication only");
  }
  return out;
}

LoadedMachine with_job_placement(LoadedMachine machine, int ranks_per_node) {
  if (ranks_per_node < 1) throw InvalidArgument("ranks per node must be at least 1");
  auto& place = machine.params.placement;
  if (place.ranks_per_node > 0 && place.ranks_per_node != ranks_per_node) {
    place.ranks_per_node = ranks_per_node;
    machine.notes.push_back("placement: " + std::to_string(ranks_per_node) +
                            " rank(s) per node, as the job is launched");
  }
  return machine;
}

PlanResult plan_for(const PlanRequest& request, const LoadedMachine& loaded) {
  const LoadedMachine machine =
      request.ranks_per_node ? with_job_placement(loaded, *request.ranks_per_node) : loaded;
  const int width = request.program ? request.program->width : request.width;
  const int height = request.program ? request.program->height : request.height;
  if (!request.program) validate(request.options);
  if (width < 1 || height < 1)
    throw InvalidArgument("image size " + std::to_string(width) + "x" + std::to_string(height) +
                          " must be at least 1x1");
  scheduler::SearchRequest sr;
  if (request.program) sr.program = request.program;
  else sr.pipeline = describe_pipeline(width, height, request.options);
  if (request.procs) {
    if (*request.procs < 1) throw InvalidArgument("--procs must be at least 1");
    sr.min_procs = sr.max_procs = *request.procs;
  } else {
    if (request.max_procs < 1) throw InvalidArgument("--max-procs must be at least 1");
    sr.min_procs = 1;
    sr.max_procs = request.max_procs;
  }
  sr.model = scheduler::parse_model(request.model);
  sr.keep_all = request.keep_all;
  sr.keep = request.keep;
  sr.runs = request.runs;

  PlanResult r;
  r.search = scheduler::search(sr, machine.params);
  r.plan = r.search.chosen().plan;
  r.cost = sr.program ? scheduler::price_program(*sr.program, r.plan, sr.model, machine.params)
                      : scheduler::price_pipeline(sr.pipeline, r.plan, sr.model, machine.params);
  r.machine = machine.params.name;
  r.source = machine;
  r.notes = machine.notes;
  if (r.search.pricing == scheduler::Pricing::fast)
    r.notes.push_back("many grids: phases priced with closed forms where they are exact, simulated elsewhere" +
                      (r.search.unpriced > 0
                           ? "; " + std::to_string(r.search.unpriced) + " sbt/bcast/mpi candidates above " +
                                 std::to_string(scheduler::kMaxSimulatedTreeRanks) +
                                 " ranks on uneven tiles have no exact fast price and were skipped"
                           : std::string()) +
                      (machine.params.placement.quota_wakes()
                           ? "; the closed forms leave out what a rank waits for a peer its CPU quota stopped"
                           : std::string()));
  return r;
}

PlanResult plan_for(const PlanRequest& request) {
  return plan_for(request, load_machine(request.perfdb, request.machine));
}

std::string summary(const PlanResult& r) {
  const auto& c = r.search.chosen();
  char buf[128];
  std::snprintf(buf, sizeof buf, " (%s, predicted %.1f us",
                std::string(scheduler::to_string(r.search.model)).c_str(), c.predicted.total);
  std::string line = "plan " + describe(r.plan) + buf;
  if (r.cost.first_touch_us > 0) {
    std::snprintf(buf, sizeof buf, "; a process's first run +%.1f us of page faults", r.cost.first_touch_us);
    line += buf;
  }
  if (c.runs > 0) {
    // The search ranked by the whole process: say so, with the figure it ranked by.
    std::snprintf(buf, sizeof buf, "; chosen for %d run%s: %.1f us", c.runs, c.runs == 1 ? "" : "s",
                  c.objective_us());
    line += buf;
  }
  return line + ")";
}

}  // namespace tessera::planning
