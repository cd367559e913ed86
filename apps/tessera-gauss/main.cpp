// tessera-gauss: Gaussian derivatives Lx, Ly, Lxx, Lxy, Lyy of an image, in parallel.
// Reads like the sequential program it replaces: read, differentiate, write.
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/cli.hpp"
#include "tessera/error.hpp"
#include "tessera/image.hpp"
#include "tessera/io.hpp"
#include "tessera/apps/gauss.hpp"
#include "tessera/program.hpp"
#include "tessera/statistics.hpp"
#include "tessera/planning/planning.hpp"
#include "tessera/result_set.hpp"
#include "tessera/session.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

struct Options {
  // Strings, not fs::path: program_options reads a path with operator>>, which stops
  // at the first space.
  std::string input, output;
  tessera::GaussianOptions gauss;
  tessera::cli::PlanOptions plan;  // --plan, --grid, --scatter, --gather, --exchange
  std::string model = "p3pc";
  tessera::cli::DatabaseOptions database;
  bool help = false, version = false, step_times = false;
  int bench = 0, warmup = 1, width = 0, height = 0;
};

po::options_description describe_options(Options& o) {
  po::options_description d(
      "tessera-gauss: Gaussian derivatives (Lx, Ly, Lxx, Lxy, Lyy) of an image over MPI\n\n"
      "Usage: mpirun -n P tessera-gauss --input FILE --sigma S --output DIR [plan options]\n\n"
      "Writes DIR/<name>.tiff (32-bit float, one channel) and DIR/<name>.png (8-bit\n"
      "preview, 0 = mid-grey when the derivative has both signs) for each derivative.\n"
      "Colour input is converted to grey (0.299 R + 0.587 G + 0.114 B); 8-bit values\n"
      "stay 0..255, 16-bit 0..65535.\n\nOptions");
  tessera::cli::add_help_version(d);
  d.add_options()(
      "input,i", po::value<std::string>(&o.input), "image to read (anything OpenCV reads)")(
      "sigma,s", po::value<double>(&o.gauss.sigma)->default_value(1.0),
      "Gaussian scale (pixels), at least 0.02657 (below it the derivative kernels underflow)")(
      "radius", po::value<int>(),
      "override the kernel radius, 1..1048576 (default ceil(k*sigma), k = 2.1, 3.5, 3.75 for\n"
      "orders 0, 1, 2)")(
      "output,o", po::value<std::string>(&o.output),
      "directory the results replace as a whole (created if missing; an existing one must be\n"
      "empty or hold an earlier tessera result set; a failed run leaves it as it was)");
  tessera::cli::add_plan_options(d, o.plan);
  d.add_options()(
      "bench", po::value<int>(&o.bench),
      "benchmark: run the pipeline N times on a random --width x --height image made\n"
      "in memory (no file I/O) and print a JSON summary as the last line of stdout")(
      "width", po::value<int>(&o.width), "benchmark image width (pixels)")(
      "height", po::value<int>(&o.height), "benchmark image height (pixels)")(
      "warmup", po::value<int>(&o.warmup)->default_value(o.warmup), "benchmark runs before timing starts")(
      "step-times", po::bool_switch(&o.step_times),
      "with --bench: also time every step of the scatter, exchange and gather plans and\n"
      "print, rank by rank on stderr, each step's median [quartiles] over the timed runs\n"
      "(set them beside the scheduler's steps: tessera-plan --timeline)");
  tessera::cli::add_model_option(d, o.model, "for --plan auto");
  tessera::cli::add_database_options(d, o.database);
  return d;
}

// The manual default grid: 1xP row strips, or as many strips as the image is tall
// enough for (each at least a border tall), the other ranks idle.
void fit_row_strips(tessera::Plan& plan, int width, int height, tessera::Halo halo) {
  while (plan.grid.y > 1 && !tessera::infeasibility(tessera::Partition(width, height, plan.grid), halo).empty())
    --plan.grid.y;
}

// Refuses, before anything large is allocated, a run that cannot fit in this
// machine's memory: the root holds the input, one output per derivative and its
// tile with the border around it.
void check_memory(int width, int height, const tessera::GaussianOptions& g, const tessera::Plan& plan) {
  const tessera::Halo halo = tessera::halo_for(g);
  const tessera::Partition partition(width, height, plan.grid);
  tessera::require_feasible(partition, halo);
  const tessera::Box t = partition.tile(0);
  const double need = 4.0 * (double(width) * double(height) * double(1 + g.derivatives.size()) +
                             (double(t.width) + 2.0 * halo.x) * (double(t.height) + 2.0 * halo.y));
  const double have = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGESIZE));
  const double gib = 1024.0 * 1024.0 * 1024.0;
  if (have > 0 && need > have) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "a %dx%d image with a kernel border of %dx%d needs about %.1f GiB on the root (input, %zu "
                  "outputs, its tile with the border), more than this machine's %.1f GiB",
                  width, height, halo.x, halo.y, need / gib, g.derivatives.size(), have / gib);
    throw tessera::InfeasiblePlan(buf);
  }
}

// std::bad_alloc says neither what was allocated nor how much: say both.
template <class F>
void naming_allocation(const std::string& what, F&& f) {
  try {
    f();
  } catch (const std::bad_alloc&) {
    throw tessera::Error("out of memory " + what);
  }
}

std::string size_text(int width, int height) { return std::to_string(width) + "x" + std::to_string(height); }

void warn_non_finite(const std::string& what, const tessera::Image& image) {
  if (const std::size_t n = tessera::count_non_finite(image))
    std::cerr << "tessera-gauss: warning: " << what << " has " << n << " non-finite value" << (n > 1 ? "s" : "")
              << " (NaN or Inf)\n";
}

// All files go into a ResultSet: the output directory holds the whole new set or,
// if anything fails, the previous one.
void write_results(tessera::ResultSet& set, const Options& o, const std::vector<tessera::Image>& results) {
  try {
    for (std::size_t i = 0; i < results.size(); ++i) {
      const std::string name(tessera::to_string(o.gauss.derivatives[i]));
      warn_non_finite(name, results[i]);
      tessera::write_float_tiff(set.file(name + ".tiff"), results[i]);
      tessera::write_png_preview(set.file(name + ".png"), results[i]);
    }
  } catch (const tessera::IoError& e) {
    // Name the file the user asked for, not its place in the temporary directory.
    std::string what = e.what();
    const std::string staging = set.staging().string(), target = set.target().string();
    if (auto at = what.find(staging); at != std::string::npos) what.replace(at, staging.size(), target);
    throw tessera::IoError(what);
  }
  set.commit();
}

// The scheduler runs on the root (it may read the performance database); every
// rank receives the plan it chose. The plan may use fewer ranks than were started.
// `runs`: tessera::planning::PlanRequest::runs (a launch that runs the pipeline once
// pays its first run; --bench reports later runs).
tessera::Plan auto_plan(const tessera::Session& session, const Options& o, int width, int height, int runs) {
  std::string text;
  session.agree([&] {
    if (!session.is_root()) return;
    tessera::planning::PlanRequest request;
    request.width = width;
    request.height = height;
    request.options = o.gauss;
    request.max_procs = session.size();
    request.ranks_per_node = session.ranks_per_node();
    request.model = o.model;
    request.perfdb = o.database.perfdb;
    request.machine = o.database.machine;
    request.keep_all = false;
    request.runs = runs;
    auto result = tessera::planning::plan_for(request);
    for (const auto& note : result.notes) std::cerr << "tessera-gauss: note: " << note << "\n";
    std::cerr << "tessera-gauss: " << tessera::planning::summary(result) << "\n";
    text = tessera::describe(result.plan);
  });
  return tessera::parse_plan(session.broadcast(text));
}

// --step-times: each rank in turn prints its plans' steps, median [quartiles] in µs
// over the timed runs (ranks beyond the plan ran none and print nothing).
void print_step_times(const tessera::Session& session, const std::map<std::string, tessera::StepSeconds>& steps,
                      int runs) {
  for (int r = 0; r < session.size(); ++r) {
    session.barrier();
    if (r != session.rank() || steps.empty()) continue;
    std::ostringstream out;
    out << std::fixed << std::setprecision(2) << "tessera-gauss: steps on rank " << r << ", median [q1-q3] of "
        << runs << " runs (µs):\n";
    for (const auto& [name, times] : steps) {
      out << "  " << name << " (" << times.runs.size() << " runs of the plan)\n";
      for (std::size_t k = 0; k < times.steps.size(); ++k) {
        std::vector<double> us;
        for (const auto& run : times.runs)
          if (k < run.size()) us.push_back(run[k] * 1e6);
        if (us.empty()) continue;
        out << "    " << k << " " << times.steps[k] << ": " << tessera::stats::median(us) << " ["
            << tessera::stats::quantile(us, 0.25) << "-" << tessera::stats::quantile(us, 0.75) << "]\n";
      }
    }
    std::cerr << out.str() << std::flush;
  }
  session.barrier();
}

// Times the pipeline from scatter to gather (everything a user waits for except
// file I/O) on an image made in memory on the root.
int run_bench(const tessera::Session& session, const Options& o, const tessera::Plan& plan) {
  tessera::Image image;
  session.agree([&] {
    if (!session.is_root()) return;
    image = tessera::Image(o.width, o.height);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.0f, 255.0f);
    float* p = image.data();
    for (std::size_t i = 0, n = std::size_t(o.width) * std::size_t(o.height); i < n; ++i) p[i] = u(rng);
  });
  const tessera::Program program = tessera::apps::gauss_program(o.gauss);
  std::vector<tessera::PhaseSeconds> runs;
  tessera::PhaseSeconds first_run;
  double first_run_mapped = 0;
  std::map<std::string, tessera::StepSeconds> steps;  // --step-times: the timed runs'
  for (int i = 0; i < o.warmup + o.bench; ++i) {
    tessera::PhaseSeconds t;
    const std::size_t mapped_before = tessera::image_bytes_mapped();
    auto* traced = o.step_times && i >= o.warmup ? &steps : nullptr;
    session.agree([&] { program.run(session, image, plan, &t, traced); });
    if (i == 0) first_run = t, first_run_mapped = double(tessera::image_bytes_mapped() - mapped_before);
    if (i >= o.warmup) runs.push_back(t);
    if (session.is_root())
      std::cerr << "run " << i + 1 << (i < o.warmup ? " (warm-up)" : "") << ": " << t.total << " s\n";
  }
  if (o.step_times) print_step_times(session, steps, o.bench);
  const auto rss = session.gather_values(tessera::Session::peak_rss_bytes());
  // The first run maps the buffers later runs take from the pool again.
  const auto mapped = session.gather_values(first_run_mapped);
  if (!session.is_root()) return 0;
  auto phase = [&](double tessera::PhaseSeconds::*field) {
    std::vector<double> v;
    for (const auto& r : runs) v.push_back(r.*field);
    return tessera::stats::median(v);
  };
  std::vector<double> totals;
  for (const auto& r : runs) totals.push_back(r.total);
  nlohmann::json j;
  j["procs"] = plan.procs();
  j["ranks"] = session.size();
  j["grid"] = tessera::to_string(plan.grid);
  j["scatter"] = tessera::to_string(plan.scatter);
  j["gather"] = tessera::to_string(plan.gather);
  j["exchange"] = tessera::to_string(plan.exchange);
  j["width"] = o.width;
  j["height"] = o.height;
  j["sigma"] = o.gauss.sigma;
  j["runs"] = o.bench;
  j["median_s"] = tessera::stats::median(totals);
  j["min_s"] = tessera::stats::min(totals);
  j["max_s"] = tessera::stats::max(totals);
  j["phases_median_s"] = {{"scatter", phase(&tessera::PhaseSeconds::scatter)},
                          {"exchange", phase(&tessera::PhaseSeconds::exchange)},
                          {"compute", phase(&tessera::PhaseSeconds::compute)},
                          {"gather", phase(&tessera::PhaseSeconds::gather)}};
  j["peak_rss_bytes"] = rss;
  j["first_run_s"] = {{"scatter", first_run.scatter},
                      {"exchange", first_run.exchange},
                      {"compute", first_run.compute},
                      {"gather", first_run.gather},
                      {"total", first_run.total}};
  j["first_run_mapped_bytes"] = mapped;
  std::cout << j.dump() << std::endl;
  return 0;
}

// Parses and checks the command line on every rank: everything a user can get wrong
// is checked before the first collective that moves data (and before anything large
// is allocated), and all ranks agree. Returns false after --help / --version.
bool parse_options(const tessera::Session& session, int argc, char** argv, Options& o, tessera::Plan& plan) {
  auto desc = describe_options(o);
  session.agree([&] {
    const po::variables_map vm = tessera::cli::parse(argc, argv, desc);
    o.help = vm.count("help") > 0;
    o.version = vm.count("version") > 0;
    if (o.help || o.version) return;
    if (vm.count("radius")) o.gauss.radius = vm["radius"].as<int>();
    tessera::cli::resolve_plan_options(vm, o.plan);
    if (vm.count("bench")) {
      if (o.bench < 1) throw tessera::InvalidArgument("--bench needs a positive number of runs");
      if (o.width < 1 || o.height < 1)
        throw tessera::InvalidArgument("--bench needs --width and --height >= 1");
      if (o.warmup < 0) throw tessera::InvalidArgument("--warmup must be >= 0");
    } else {
      if (o.step_times) throw tessera::InvalidArgument("--step-times needs --bench");
      if (o.input.empty()) throw tessera::InvalidArgument("--input is required (see --help)");
      if (o.output.empty()) throw tessera::InvalidArgument("--output is required (see --help)");
    }
    // Builds the three kernels (bounded by kMaxRadius): refuses sigma/radius pairs
    // whose kernels cannot be normalised to finite taps.
    (void)tessera::kernels_for(o.gauss);
    if (o.plan.mode == "manual") plan = tessera::cli::manual_plan(o.plan, session.size());
  });
  if (!o.help && !o.version) return true;
  if (session.is_root())
    std::cout << (o.help ? (std::ostringstream() << desc).str() : tessera::cli::version_line("tessera-gauss"))
              << "\n";
  return false;
}

// Reads the image on the root, once the output directory is known to be replaceable.
tessera::Image read_input(const tessera::Session& session, const Options& o, std::optional<tessera::ResultSet>& outputs,
                          const std::vector<std::string>& arguments) {
  tessera::Image image;
  session.agree([&] {
    if (!session.is_root()) return;
    // Refuse an output directory we may not replace before reading a large image.
    outputs.emplace(fs::path(o.output), "tessera-gauss", arguments);
    naming_allocation("reading '" + o.input + "'", [&] { image = tessera::read_image(fs::path(o.input)); });
    if (const std::size_t n = tessera::count_non_finite(image))
      std::cerr << "tessera-gauss: warning: '" << o.input << "' has " << n
                << " non-finite pixel(s) (NaN or Inf): derivatives within the kernel radius of them are not "
                   "finite; PNG previews are scaled on the finite values\n";
  });
  return image;
}

int run(const tessera::Session& session, int argc, char** argv) {
  Options o;
  tessera::Plan plan;
  if (!parse_options(session, argc, argv, o, plan)) return 0;
  const tessera::Halo halo = tessera::halo_for(o.gauss);
  if (o.bench > 0) {
    if (o.plan.mode == "auto")
      plan = auto_plan(session, o, o.width, o.height, 0);
    else if (o.plan.grid.empty())
      fit_row_strips(plan, o.width, o.height, halo);
    session.agree([&] { check_memory(o.width, o.height, o.gauss, plan); });
    return run_bench(session, o, plan);
  }
  std::optional<tessera::ResultSet> outputs;
  const tessera::Image image = read_input(session, o, outputs, std::vector<std::string>(argv + 1, argv + argc));
  // Only the root has the image; every rank may have to name its size in an error.
  const std::string image_size = session.broadcast(size_text(image.width(), image.height()));
  if (o.plan.mode == "auto") {
    plan = auto_plan(session, o, image.width(), image.height(),
                       tessera::planning::one_launch_runs(session.size()));
  } else if (o.plan.grid.empty()) {
    if (session.is_root()) fit_row_strips(plan, image.width(), image.height(), halo);
    plan = tessera::parse_plan(session.broadcast(tessera::describe(plan)));
  }
  session.agree([&] {
    if (session.is_root()) check_memory(image.width(), image.height(), o.gauss, plan);
  });
  if (session.is_root())
    std::cerr << "tessera-gauss: " << o.input << " (" << image.width() << "x" << image.height() << "), sigma "
              << o.gauss.sigma << ", running " << tessera::describe(plan) << " on " << plan.procs() << " of "
              << session.size() << " ranks\n";
  // The derivatives as a program of the operation library: read, differentiate, write.
  const tessera::Program program = tessera::apps::gauss_program(o.gauss);
  std::vector<tessera::Image> results;
  session.agree([&] {
    naming_allocation("computing the derivatives of a " + image_size + " image with a kernel border of " +
                          size_text(halo.x, halo.y) + " (plan " + tessera::describe(plan) + ")",
                      [&] {
                        auto out = program.run(session, image, plan);
                        for (tessera::Derivative d : o.gauss.derivatives)
                          if (auto it = out.images.find(std::string(tessera::to_string(d))); it != out.images.end())
                            results.push_back(std::move(it->second));
                      });
  });
  session.agree([&] {
    if (session.is_root())
      naming_allocation("encoding the " + image_size + " result images", [&] { write_results(*outputs, o, results); });
  });
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::Session session(argc, argv);
  try {
    return run(session, argc, argv);
  } catch (const std::exception& e) {
    if (session.is_root()) std::cerr << "tessera-gauss: error: " << e.what() << "\n";
    return 1;
  }
}
