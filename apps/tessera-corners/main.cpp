// tessera-corners: Harris corners (SPEC "Apps"), in parallel. Reads like the OpenCV
// program it replaces: derivatives, structure tensor smoothed at rho, response, local
// maxima above a threshold, a CSV of corners.
#include <algorithm>
#include <cmath>
#include <boost/program_options.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "tessera/apps/corners.hpp"
#include "tessera/apps/runner.hpp"

namespace po = boost::program_options;

namespace {

constexpr const char* kName = "tessera-corners";

struct Corner {
  int x, y;
  float response;
};

// Strongest first; equal responses in raster order (y, then x): a total order, so the
// file is the same whatever the grid.
std::vector<Corner> list_corners(const tessera::Image& mask, const tessera::Image& response, long long max) {
  std::vector<Corner> corners;
  for (int y = 0; y < mask.height(); ++y)
    for (int x = 0; x < mask.width(); ++x)
      if (mask.at(x, y) != 0.0f) corners.push_back({x, y, response.at(x, y)});
  std::stable_sort(corners.begin(), corners.end(),
                   [](const Corner& a, const Corner& b) { return a.response > b.response; });
  if (max >= 0 && corners.size() > std::size_t(max)) corners.resize(std::size_t(max));
  return corners;
}

std::string csv(const std::vector<Corner>& corners) {
  std::string text = "x,y,response\n";
  char line[96];
  for (const Corner& c : corners) {
    std::snprintf(line, sizeof line, "%d,%d,%.9g\n", c.x, c.y, double(c.response));
    text += line;
  }
  return text;
}

int run(const tessera::Session& session, int argc, char** argv) {
  tessera::apps::AppOptions o;
  tessera::apps::CornersOptions harris;
  long long max = -1;
  po::options_description d(
      "tessera-corners: Harris corners over MPI\n\n"
      "Usage: mpirun -n P tessera-corners --input FILE --sigma S --rho R --output DIR [--k K]\n"
      "       [--threshold T] [--max N] [plan options]\n\n"
      "A = Lx^2, B = Lx Ly, C = Ly^2 at scale S, each smoothed by the order-0 kernel at R;\n"
      "H = (A C - B^2) - K (A + C)^2. Corners: H > T * max H and a maximum of its 3x3\n"
      "neighbourhood (> the neighbours before it in raster order, >= those after it, so a\n"
      "plateau gives one corner). Writes DIR/response.tiff (float32), DIR/response.png\n"
      "(8-bit preview) and DIR/corners.csv (x,y,response; strongest first, equal responses\n"
      "in raster order). Byte-identical for every P, grid and algorithm.\n\nOptions");
  tessera::apps::add_app_options(d, o);
  d.add_options()("rho", po::value<double>(&harris.rho), "integration scale R (default 2 S)")(
      "k", po::value<double>(&harris.k)->default_value(harris.k), "Harris's K")(
      "threshold", po::value<double>(&harris.threshold)->default_value(harris.threshold),
      "T: corners need H > T * max H")("max", po::value<long long>(&max), "at most N corners (default all)");
  tessera::Program program;
  const bool go = tessera::apps::parse_app_options(session, argc, argv, d, o, kName, [&] {
    tessera::validate(tessera::GaussianOptions{o.sigma, o.radius});
    if (harris.rho == 0) harris.rho = 2 * o.sigma;
    if (!(harris.rho > 0)) throw tessera::InvalidArgument("--rho must be positive");
    if (!std::isfinite(harris.k) || !std::isfinite(harris.threshold))
      throw tessera::InvalidArgument("--k and --threshold must be finite");
    if (max < -1) throw tessera::InvalidArgument("--max must be >= 0");
    harris.sigma = o.sigma;
    harris.radius = o.radius;
    tessera::validate(tessera::GaussianOptions{o.sigma, o.radius});
    (void)tessera::gaussian_kernel(o.sigma, 1, o.radius);
    (void)tessera::gaussian_kernel(harris.rho, 0);
    program = tessera::apps::corners_program(harris);
  });
  if (!go) return 0;

  std::optional<tessera::ResultSet> outputs;
  const tessera::Image image = tessera::apps::read_app_input(session, o, kName, outputs, argc, argv);
  const tessera::Plan plan =
      tessera::apps::choose_app_plan(session, o, program, image.width(), image.height(), kName);
  if (session.is_root())
    std::cerr << kName << ": " << o.input << " (" << image.width() << "x" << image.height() << "), sigma "
              << o.sigma << ", rho " << harris.rho << ", running " << tessera::describe(plan) << " on "
              << plan.procs() << " of " << session.size() << " ranks\n";
  tessera::ProgramResults results = tessera::apps::run_app_program(session, program, image, plan);
  tessera::apps::write_app_results(session, outputs, [&](tessera::ResultSet& set) {
    const tessera::Image& h = results.images.at("response");
    tessera::write_float_tiff(set.file("response.tiff"), h);
    tessera::write_png_preview(set.file("response.png"), h);
    tessera::write_file(set.file("corners.csv"), csv(list_corners(results.images.at("corners"), h, max)));
  });
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tessera::apps::app_main(argc, argv, kName, run); }
