// Hand-written stand-ins for the apps' programs (see app_programs.hpp): the steps their
// operations will run, from SPEC's definitions and the library's kernel sizes.
#include "tessera/planning/app_programs.hpp"

#include <algorithm>

#include "tessera/error.hpp"
#include "tessera/scheduler/program.hpp"

namespace tessera::planning {
namespace {

using Kind = ProgramStep::Kind;

struct Builder {
  ProgramDescription p;
  void comm(Kind kind, const std::string& op, int images, Halo halo = {}) {
    ProgramStep s;
    s.kind = kind;
    s.operation = op;
    s.images = images;
    s.halo = halo;
    p.steps.push_back(s);
  }
  void compute(const std::string& op, Primitive primitive, int size, Axis axis = Axis::x, Halo region = {}) {
    ProgramStep s;
    s.kind = Kind::compute;
    s.operation = op;
    s.primitive = primitive;
    s.axis = axis;
    (primitive == Primitive::separable || primitive == Primitive::neighbourhood ? s.taps : s.ops) = size;
    s.region = region;
    p.steps.push_back(s);
  }
  // One image smoothed separably: a y pass (also over the x-halo columns the x pass
  // reads) then an x pass.
  void separable(const std::string& op, int taps_y, int taps_x, int halo_x) {
    compute(op, Primitive::separable, taps_y, Axis::y, Halo{halo_x, 0});
    compute(op, Primitive::separable, taps_x, Axis::x);
  }
  // A global maximum: the local sweep, then the allreduce.
  void global_max(const std::string& op) {
    compute(op, Primitive::reduction, 1);
    comm(Kind::reduce, op, 1);
  }
};

// Lx and Ly at sigma: halo = the order-1 radius on both axes.
int first_order_radius(double sigma) { return std::max(default_radius(sigma, 0), default_radius(sigma, 1)); }

void gradient(Builder& b, double sigma) {
  const int r0 = default_radius(sigma, 0), r1 = default_radius(sigma, 1);
  const int h = first_order_radius(sigma);
  const std::string op = "gaussian derivatives (Lx, Ly)";
  b.comm(Kind::exchange, op, 1, Halo{h, h});
  b.separable(op, 2 * r0 + 1, 2 * r1 + 1, h);  // Lx: order 0 along y, order 1 along x
  b.separable(op, 2 * r1 + 1, 2 * r0 + 1, h);  // Ly
}

}  // namespace

const std::vector<std::string>& app_names() {
  static const std::vector<std::string> names{"gauss", "edges", "corners"};
  return names;
}

ProgramDescription gauss_program(int width, int height, const AppOptions& o) {
  GaussianOptions g;
  g.sigma = o.sigma;
  g.radius = o.radius;
  validate(g);
  return scheduler::describe_program(describe_pipeline(width, height, g));
}

ProgramDescription edges_program(int width, int height, const AppOptions& o) {
  if (o.hysteresis_rounds < 1) throw InvalidArgument("hysteresis rounds must be at least 1");
  GaussianOptions g;
  g.sigma = o.sigma;
  validate(g);
  Builder b;
  const int h = std::max(first_order_radius(o.sigma), 1);
  b.p.width = width;
  b.p.height = height;
  b.p.halo = Halo{h, h};
  b.comm(Kind::scatter, "input", 1, b.p.halo);
  gradient(b, o.sigma);
  b.compute("magnitude", Primitive::pixelwise, 4);  // Lx², Ly², +, sqrt
  b.global_max("max magnitude");
  // Direction quantised from Lx, Ly (atan2, compare), then M against its two
  // neighbours along it, and the thresholds relative to max M.
  b.comm(Kind::exchange, "non-maximum suppression", 1, Halo{1, 1});
  b.compute("non-maximum suppression", Primitive::pixelwise, 3);
  b.compute("non-maximum suppression", Primitive::neighbourhood, 3);
  b.compute("double threshold", Primitive::pixelwise, 4);
  // Hysteresis: exchange the labels, propagate within the tile, count changes, agree.
  const int first = int(b.p.steps.size());
  b.comm(Kind::exchange, "hysteresis", 1, Halo{1, 1});
  b.compute("hysteresis", Primitive::neighbourhood, 3);
  b.compute("hysteresis", Primitive::reduction, 1);
  b.comm(Kind::reduce, "hysteresis", 1);
  b.p.steps.back().repeat_first = first;
  b.p.steps.back().expected_rounds = o.hysteresis_rounds;
  b.comm(Kind::gather, "output", 2);  // magnitude, edges
  return b.p;
}

ProgramDescription corners_program(int width, int height, const AppOptions& o) {
  const double rho = o.rho.value_or(2 * o.sigma);
  for (double s : {o.sigma, rho}) {
    GaussianOptions g;
    g.sigma = s;
    validate(g);
  }
  Builder b;
  const int hd = first_order_radius(o.sigma), hr = default_radius(rho, 0);
  const int h = std::max({hd, hr, 1});
  b.p.width = width;
  b.p.height = height;
  b.p.halo = Halo{h, h};
  b.comm(Kind::scatter, "input", 1, b.p.halo);
  gradient(b, o.sigma);
  b.compute("structure tensor", Primitive::pixelwise, 3);  // A = Lx², B = Lx Ly, C = Ly²
  const std::string smooth = "integration smoothing (rho)";
  b.comm(Kind::exchange, smooth, 3, Halo{hr, hr});
  for (int i = 0; i < 3; ++i) b.separable(smooth, 2 * hr + 1, 2 * hr + 1, hr);
  b.compute("response", Primitive::pixelwise, 7);  // A C - B², K (A + C)², difference
  b.global_max("max response");
  b.comm(Kind::exchange, "local maxima", 1, Halo{1, 1});
  b.compute("local maxima", Primitive::neighbourhood, 3);
  b.comm(Kind::gather, "output", 1);  // response
  return b.p;
}

ProgramDescription app_program(std::string_view name, int width, int height, const AppOptions& options) {
  if (name == "gauss") return gauss_program(width, height, options);
  if (name == "edges") return edges_program(width, height, options);
  if (name == "corners") return corners_program(width, height, options);
  std::string known;
  for (const auto& n : app_names()) known += (known.empty() ? "" : ", ") + n;
  throw InvalidArgument("unknown app '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace tessera::planning
