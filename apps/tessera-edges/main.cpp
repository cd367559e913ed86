// tessera-edges: Canny edges on Gaussian derivatives (SPEC "Apps"), in parallel.
// Reads like the OpenCV program it replaces: read, differentiate, magnitude,
// non-maximum suppression, double threshold, hysteresis, write.
#include <boost/program_options.hpp>
#include <string>

#include "tessera/apps/edges.hpp"
#include "tessera/apps/runner.hpp"

namespace po = boost::program_options;

namespace {

constexpr const char* kName = "tessera-edges";

int run(const tessera::Session& session, int argc, char** argv) {
  tessera::apps::AppOptions o;
  tessera::apps::EdgesOptions edges;
  po::options_description d(
      "tessera-edges: Canny edges on Gaussian derivatives over MPI\n\n"
      "Usage: mpirun -n P tessera-edges --input FILE --sigma S --output DIR [--low A] [--high B]\n"
      "       [plan options]\n\n"
      "M = sqrt(Lx^2 + Ly^2) at scale S. Non-maximum suppression keeps a pixel whose M is not\n"
      "below either neighbour along atan2(Ly, Lx) rounded to 0, 45, 90 or 135 degrees (ties\n"
      "survive; halves round away from zero). A survivor with M >= B * max M is an edge; one\n"
      "with M >= A * max M is an edge if 8-connected to an edge through such survivors,\n"
      "anywhere in the image. Pixels with M = 0 are never edges. Writes DIR/magnitude.tiff\n"
      "(float32), DIR/magnitude.png (8-bit preview) and DIR/edges.png (255 on edges, 0\n"
      "elsewhere). Byte-identical for every P, grid and algorithm.\n\nOptions");
  tessera::apps::add_app_options(d, o);
  d.add_options()("low", po::value<double>(&edges.low)->default_value(edges.low),
                  "weak threshold A, a fraction of the image's largest M")(
      "high", po::value<double>(&edges.high)->default_value(edges.high),
      "strong threshold B, a fraction of the image's largest M");
  tessera::Program program;
  const bool go = tessera::apps::parse_app_options(session, argc, argv, d, o, kName, [&] {
    if (!(edges.low >= 0) || !(edges.high >= 0))
      throw tessera::InvalidArgument("--low and --high must be fractions >= 0");
    edges.sigma = o.sigma;
    edges.radius = o.radius;
    tessera::validate(tessera::GaussianOptions{o.sigma, o.radius});
    (void)tessera::gaussian_kernel(o.sigma, 1, o.radius);
    program = tessera::apps::edges_program(edges);
  });
  if (!go) return 0;

  std::optional<tessera::ResultSet> outputs;
  const tessera::Image image = tessera::apps::read_app_input(session, o, kName, outputs, argc, argv);
  const tessera::Plan plan =
      tessera::apps::choose_app_plan(session, o, program, image.width(), image.height(), kName);
  if (session.is_root())
    std::cerr << kName << ": " << o.input << " (" << image.width() << "x" << image.height() << "), sigma "
              << o.sigma << ", running " << tessera::describe(plan) << " on " << plan.procs() << " of "
              << session.size() << " ranks\n";
  tessera::ProgramResults results = tessera::apps::run_app_program(session, program, image, plan);
  tessera::apps::write_app_results(session, outputs, [&](tessera::ResultSet& set) {
    const tessera::Image& m = results.images.at("magnitude");
    tessera::write_float_tiff(set.file("magnitude.tiff"), m);
    tessera::write_png_preview(set.file("magnitude.png"), m);
    tessera::write_png_u8(set.file("edges.png"), results.images.at("edges"));
  });
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tessera::apps::app_main(argc, argv, kName, run); }
