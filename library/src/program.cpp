// Recording a Program and lowering it to stages. Pure: no MPI.
#include "tessera/program.hpp"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <map>
#include <set>

#include "program_graph.hpp"
#include "tessera/error.hpp"

namespace tessera {

using detail::Graph;
using detail::Node;
using detail::Op;
using detail::Operand;

namespace detail {

bool is_pixelwise(Op op) { return op >= Op::add && op <= Op::select; }
bool is_reduction(Op op) { return op >= Op::r_sum && op <= Op::r_count; }
bool is_image_op(Op op) { return op <= Op::hysteresis; }

}  // namespace detail

namespace {

std::string show(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

const std::shared_ptr<Graph>& graph_of(const DImage& a) {
  if (!a.valid()) throw InvalidArgument("an operation was given an empty image handle");
  return a.graph();
}

// The one graph of all the handles (scalars may be constants, which have none).
std::shared_ptr<Graph> common(std::initializer_list<const std::shared_ptr<Graph>*> graphs) {
  std::shared_ptr<Graph> g;
  for (auto* p : graphs) {
    if (!*p) continue;
    if (g && g != *p) throw InvalidArgument("an operation mixes images of two different programs");
    g = *p;
  }
  return g;
}

Operand scalar_operand(Graph& g, const Scalar& s) {
  if (!s.is_constant()) return {false, s.id()};
  Node n;
  n.op = Op::s_const;
  n.value = s.constant();
  n.label = show(s.constant());
  return {false, g.add(std::move(n))};
}

std::string_view op_name(Op op) {
  switch (op) {
    case Op::add: return "+";
    case Op::sub: return "-";
    case Op::mul: return "*";
    case Op::div: return "/";
    case Op::min: return "min";
    case Op::max: return "max";
    case Op::atan2: return "atan2";
    case Op::magnitude: return "magnitude";
    case Op::lt: return "<";
    case Op::le: return "<=";
    case Op::gt: return ">";
    case Op::ge: return ">=";
    case Op::neg: return "neg";
    case Op::abs: return "abs";
    case Op::sqrt: return "sqrt";
    case Op::select: return "select";
    default: return "?";
  }
}

DImage image_op(Op op, std::initializer_list<DImage> images, const Scalar* scalar = nullptr) {
  std::shared_ptr<Graph> g;
  for (const DImage& a : images) g = common({&g, &graph_of(a)});
  if (scalar) g = common({&g, &scalar->graph()});
  Node n;
  n.op = op;
  for (const DImage& a : images) n.args.push_back({true, a.id()});
  if (scalar) n.args.push_back(scalar_operand(*g, *scalar));
  n.label = std::string(op_name(op));
  const int id = g->add(std::move(n));
  return DImage(g, id);
}

// scalar (op) image: the scalar goes first.
DImage scalar_first(Op op, const Scalar& s, const DImage& b) {
  auto g = common({&s.graph(), &graph_of(b)});
  Node n;
  n.op = op;
  n.args.push_back(scalar_operand(*g, s));
  n.args.push_back({true, b.id()});
  n.label = std::string(op_name(op));
  const int id = g->add(std::move(n));
  return DImage(g, id);
}

Scalar scalar_op(Op op, const Scalar& a, const Scalar& b) {
  if (a.is_constant() && b.is_constant()) {
    const double x = a.constant(), y = b.constant();
    switch (op) {
      case Op::s_add: return x + y;
      case Op::s_sub: return x - y;
      case Op::s_mul: return x * y;
      default: return x / y;
    }
  }
  auto g = common({&a.graph(), &b.graph()});
  Node n;
  n.op = op;
  n.args = {scalar_operand(*g, a), scalar_operand(*g, b)};
  n.label = "scalar";
  const int id = g->add(std::move(n));
  return Scalar(g, id);
}

Scalar reduction(Op op, const DImage& a, const char* label) {
  auto g = graph_of(a);
  Node n;
  n.op = op;
  n.args = {{true, a.id()}};
  n.label = label;
  const int id = g->add(std::move(n));
  return Scalar(g, id);
}

}  // namespace

// --- Program -------------------------------------------------------------------------

Program::Program() : graph_(std::make_shared<Graph>()) {}

DImage Program::input() {
  if (graph_->input < 0) {
    Node n;
    n.op = Op::input;
    n.label = "input";
    graph_->input = graph_->add(std::move(n));
  }
  return DImage(graph_, graph_->input);
}

namespace {
void check_output_name(const Graph& g, const std::string& name) {
  if (name.empty()) throw InvalidArgument("an output needs a name");
  for (const auto& o : g.outputs)
    if (o.name == name) throw InvalidArgument("two outputs are named '" + name + "'");
}
}  // namespace

void Program::output(const std::string& name, const DImage& image) {
  if (graph_of(image) != graph_) throw InvalidArgument("output '" + name + "' is an image of another program");
  check_output_name(*graph_, name);
  graph_->outputs.push_back({name, {true, image.id()}});
}

void Program::output(const std::string& name, const Scalar& value) {
  if (!value.is_constant() && value.graph() != graph_)
    throw InvalidArgument("output '" + name + "' is a scalar of another program");
  check_output_name(*graph_, name);
  graph_->outputs.push_back({name, scalar_operand(*graph_, value)});
}

std::vector<std::string> Program::output_names() const {
  std::vector<std::string> names;
  for (const auto& o : graph_->outputs) names.push_back(o.name);
  return names;
}

ProgramDescription Program::describe(int width, int height) const {
  if (width < 1 || height < 1) throw InvalidArgument("image size must be at least 1x1");
  return detail::describe(*graph_, detail::lower(*graph_), width, height);
}

Halo Program::halo() const { return detail::lower(*graph_).max_halo; }

// --- operations ------------------------------------------------------------------------

DImage operator+(const DImage& a, const DImage& b) { return image_op(Op::add, {a, b}); }
DImage operator-(const DImage& a, const DImage& b) { return image_op(Op::sub, {a, b}); }
DImage operator*(const DImage& a, const DImage& b) { return image_op(Op::mul, {a, b}); }
DImage operator/(const DImage& a, const DImage& b) { return image_op(Op::div, {a, b}); }
DImage operator+(const DImage& a, const Scalar& b) { return image_op(Op::add, {a}, &b); }
DImage operator-(const DImage& a, const Scalar& b) { return image_op(Op::sub, {a}, &b); }
DImage operator*(const DImage& a, const Scalar& b) { return image_op(Op::mul, {a}, &b); }
DImage operator/(const DImage& a, const Scalar& b) { return image_op(Op::div, {a}, &b); }
DImage operator+(const Scalar& a, const DImage& b) { return scalar_first(Op::add, a, b); }
DImage operator-(const Scalar& a, const DImage& b) { return scalar_first(Op::sub, a, b); }
DImage operator*(const Scalar& a, const DImage& b) { return scalar_first(Op::mul, a, b); }
DImage operator/(const Scalar& a, const DImage& b) { return scalar_first(Op::div, a, b); }
DImage operator-(const DImage& a) { return image_op(Op::neg, {a}); }
DImage abs(const DImage& a) { return image_op(Op::abs, {a}); }
DImage sqrt(const DImage& a) { return image_op(Op::sqrt, {a}); }
DImage min(const DImage& a, const DImage& b) { return image_op(Op::min, {a, b}); }
DImage max(const DImage& a, const DImage& b) { return image_op(Op::max, {a, b}); }
DImage min(const DImage& a, const Scalar& b) { return image_op(Op::min, {a}, &b); }
DImage max(const DImage& a, const Scalar& b) { return image_op(Op::max, {a}, &b); }
DImage atan2(const DImage& y, const DImage& x) { return image_op(Op::atan2, {y, x}); }
DImage magnitude(const DImage& x, const DImage& y) { return image_op(Op::magnitude, {x, y}); }
DImage operator<(const DImage& a, const Scalar& b) { return image_op(Op::lt, {a}, &b); }
DImage operator<=(const DImage& a, const Scalar& b) { return image_op(Op::le, {a}, &b); }
DImage operator>(const DImage& a, const Scalar& b) { return image_op(Op::gt, {a}, &b); }
DImage operator>=(const DImage& a, const Scalar& b) { return image_op(Op::ge, {a}, &b); }
DImage operator<(const DImage& a, const DImage& b) { return image_op(Op::lt, {a, b}); }
DImage operator<=(const DImage& a, const DImage& b) { return image_op(Op::le, {a, b}); }
DImage operator>(const DImage& a, const DImage& b) { return image_op(Op::gt, {a, b}); }
DImage operator>=(const DImage& a, const DImage& b) { return image_op(Op::ge, {a, b}); }
DImage select(const DImage& mask, const DImage& a, const DImage& b) { return image_op(Op::select, {mask, a, b}); }

Scalar operator+(const Scalar& a, const Scalar& b) { return scalar_op(Op::s_add, a, b); }
Scalar operator-(const Scalar& a, const Scalar& b) { return scalar_op(Op::s_sub, a, b); }
Scalar operator*(const Scalar& a, const Scalar& b) { return scalar_op(Op::s_mul, a, b); }
Scalar operator/(const Scalar& a, const Scalar& b) { return scalar_op(Op::s_div, a, b); }

Kernel1D make_kernel(const std::vector<float>& taps) {
  if (taps.empty() || taps.size() % 2 == 0)
    throw InvalidArgument("a 1-D kernel needs an odd number of taps, got " + std::to_string(taps.size()));
  Kernel1D k;
  k.order = -1;
  k.radius = int(taps.size() / 2);
  k.taps = taps;
  return k;
}

DImage sep_filter(const DImage& a, const Kernel1D& kx, const Kernel1D& ky) {
  auto g = graph_of(a);
  for (const Kernel1D* k : {&kx, &ky})
    if (k->taps.size() != std::size_t(2 * k->radius + 1))
      throw InvalidArgument("a 1-D kernel's taps do not match its radius");
  Node n;
  n.op = Op::sep;
  n.args = {{true, a.id()}};
  n.kx = kx;
  n.ky = ky;
  n.label = "sep_filter " + std::to_string(kx.size()) + "x" + std::to_string(ky.size());
  const int id = g->add(std::move(n));
  return DImage(g, id);
}

DImage gaussian(const DImage& a, double sigma, int ox, int oy, std::optional<int> radius) {
  DImage out = sep_filter(a, gaussian_kernel(sigma, ox, radius), gaussian_kernel(sigma, oy, radius));
  a.graph()->nodes[std::size_t(out.id())].label =
      "gaussian sigma=" + show(sigma) + " (" + std::to_string(ox) + "," + std::to_string(oy) + ")";
  return out;
}

DImage filter2d(const DImage& a, const std::vector<float>& taps) {
  if (taps.size() != 9 && taps.size() != 25)
    throw InvalidArgument("filter2d takes a 3x3 or 5x5 kernel (9 or 25 taps), got " + std::to_string(taps.size()));
  DImage out = image_op(Op::filter2d, {a});
  auto& n = a.graph()->nodes[std::size_t(out.id())];
  n.taps = taps;
  n.label = taps.size() == 9 ? "filter2d 3x3" : "filter2d 5x5";
  return out;
}

DImage non_max_suppression(const DImage& m, const DImage& gx, const DImage& gy) {
  DImage out = image_op(Op::nms, {m, gx, gy});
  m.graph()->nodes[std::size_t(out.id())].label = "non_max_suppression";
  return out;
}

DImage local_maxima(const DImage& a) {
  DImage out = image_op(Op::local_max, {a});
  a.graph()->nodes[std::size_t(out.id())].label = "local_maxima";
  return out;
}

DImage hysteresis(const DImage& strong, const DImage& weak) {
  DImage out = image_op(Op::hysteresis, {strong, weak});
  strong.graph()->nodes[std::size_t(out.id())].label = "hysteresis";
  return out;
}

Scalar sum(const DImage& a) { return reduction(Op::r_sum, a, "sum"); }
Scalar min_of(const DImage& a) { return reduction(Op::r_min, a, "min"); }
Scalar max_of(const DImage& a) { return reduction(Op::r_max, a, "max"); }
Scalar mean(const DImage& a) { return reduction(Op::r_mean, a, "mean"); }
Scalar count_nonzero(const DImage& a) { return reduction(Op::r_count, a, "count_nonzero"); }

// --- lowering --------------------------------------------------------------------------

namespace detail {

namespace {

Halo widest(Halo a, Halo b) { return {std::max(a.x, b.x), std::max(a.y, b.y)}; }

// The halo node `n` needs of its argument `i`.
Halo halo_needed(const Node& n, std::size_t i) {
  switch (n.op) {
    case Op::sep: return {n.kx.radius, n.ky.radius};
    case Op::filter2d: return n.taps.size() == 9 ? Halo{1, 1} : Halo{2, 2};
    case Op::nms: return i == 0 ? Halo{1, 1} : Halo{};
    case Op::local_max: return {1, 1};
    default: return {};
  }
}

Stage::Kind kind_of(Op op) {
  if (is_pixelwise(op)) return Stage::Kind::pixel;
  if (is_reduction(op)) return Stage::Kind::reduce;
  switch (op) {
    case Op::sep: return Stage::Kind::separable;
    case Op::hysteresis: return Stage::Kind::hysteresis;
    default: return Stage::Kind::neighbourhood;
  }
}

// Compiles the fused chain rooted at `root` (inlining unmaterialised pixel-wise args).
int compile(const Graph& g, const Lowered& l, int node, bool root, PixelProgram& p, std::map<int, int>& done) {
  // A node the chain reads twice (a leaf, or an inlined (a + c) in t * t) is one register.
  if (auto it = done.find(node); it != done.end()) return it->second;
  const Node& n = g.nodes[std::size_t(node)];
  PixelProgram::Instr in;
  if (!root && (!is_pixelwise(n.op) || l.materialised[std::size_t(node)])) {
    in.op = Op::input;
    in.leaf = node;
  } else {
    ++p.ops;
    int regs[3] = {-1, -1, -1};
    for (std::size_t i = 0; i < n.args.size(); ++i) {
      const Operand& a = n.args[i];
      if (a.image) {
        regs[i] = compile(g, l, a.id, false, p, done);
      } else {
        PixelProgram::Instr s;
        s.op = Op::s_const;
        s.leaf = a.id;
        p.code.push_back(s);
        regs[i] = int(p.code.size()) - 1;
      }
    }
    in.op = n.op;
    in.a = regs[0];
    in.b = regs[1];
    in.c = regs[2];
  }
  p.code.push_back(in);
  done[node] = int(p.code.size()) - 1;
  return int(p.code.size()) - 1;
}

}  // namespace

Lowered lower(const Graph& g) {
  if (g.input < 0) throw InvalidArgument("the program has no input");
  if (g.outputs.empty()) throw InvalidArgument("the program has no outputs");
  const std::size_t count = g.nodes.size();
  Lowered l;
  l.live.assign(count, false);
  l.materialised.assign(count, false);
  l.buffer_halo.assign(count, Halo{});
  l.pixel.resize(count);

  // Liveness: what the outputs depend on (args always precede their node).
  std::vector<int> uses(count, 0);
  for (const auto& o : g.outputs) {
    l.live[std::size_t(o.value.id)] = true;
    if (o.value.image) ++uses[std::size_t(o.value.id)];
  }
  for (std::size_t i = count; i-- > 0;) {
    if (!l.live[i]) continue;
    const auto& args = g.nodes[i].args;
    for (std::size_t k = 0; k < args.size(); ++k) {
      l.live[std::size_t(args[k].id)] = true;
      bool repeated = false;  // a * a reads a once: it counts as one reader
      for (std::size_t j = 0; j < k; ++j) repeated = repeated || (args[j].image && args[j].id == args[k].id);
      if (args[k].image && !repeated) ++uses[std::size_t(args[k].id)];
    }
  }
  if (!l.live[std::size_t(g.input)]) l.live[std::size_t(g.input)] = true;  // always scattered

  // Fusion: a pixel-wise node is inlined into its only reader if that reader is
  // pixel-wise too (and it is not an output); everything else gets a tile.
  std::vector<int> pixel_reader(count, -1);
  for (std::size_t i = 0; i < count; ++i)
    if (l.live[i] && is_pixelwise(g.nodes[i].op))
      for (const Operand& a : g.nodes[i].args)
        if (a.image) pixel_reader[std::size_t(a.id)] = int(i);
  for (std::size_t i = 0; i < count; ++i) {
    const Node& n = g.nodes[i];
    if (!l.live[i] || !is_image_op(n.op)) continue;
    const bool inlined = is_pixelwise(n.op) && uses[i] == 1 && pixel_reader[i] >= 0;
    bool is_output = false;
    for (const auto& o : g.outputs) is_output = is_output || (o.value.image && o.value.id == int(i));
    l.materialised[i] = !inlined || is_output;
  }
  // Halos: each tile is allocated with the widest halo its readers need.
  for (std::size_t i = 0; i < count; ++i) {
    if (!l.live[i]) continue;
    const Node& n = g.nodes[i];
    for (std::size_t k = 0; k < n.args.size(); ++k)
      if (n.args[k].image)
        l.buffer_halo[std::size_t(n.args[k].id)] =
            widest(l.buffer_halo[std::size_t(n.args[k].id)], halo_needed(n, k));
    if (n.op == Op::hysteresis) l.buffer_halo[i] = widest(l.buffer_halo[i], Halo{1, 1});
  }
  for (std::size_t i = 0; i < count; ++i)
    if (l.live[i] && l.materialised[i]) l.max_halo = widest(l.max_halo, l.buffer_halo[i]);
  for (std::size_t i = 0; i < count; ++i)
    if (l.live[i] && l.materialised[i] && is_pixelwise(g.nodes[i].op)) {
      std::map<int, int> done;
      compile(g, l, int(i), true, l.pixel[i], done);
    }

  // Stages, in program order. Separable filters of one input run as one group, at the
  // first of them. Halo exchanges go right before the first stage that needs them.
  std::vector<bool> valid(count, false), done(count, false);
  std::vector<int> last_stage(count, -1);
  auto reads = [&](int node) {  // the materialised images a stage node reads
    std::vector<int> r;
    const Node& n = g.nodes[std::size_t(node)];
    if (is_pixelwise(n.op)) {
      for (const auto& in : l.pixel[std::size_t(node)].code)
        if (in.op == Op::input) r.push_back(in.leaf);
    } else {
      for (const Operand& a : n.args)
        if (a.image) r.push_back(a.id);
    }
    return r;
  };
  l.stages.push_back({Stage::Kind::scatter, {g.input}, l.buffer_halo[std::size_t(g.input)], {}, "input"});
  done[std::size_t(g.input)] = true;
  for (std::size_t i = 0; i < count; ++i) {
    const Node& n = g.nodes[i];
    if (!l.live[i] || done[i] || n.op == Op::input) continue;
    if (!is_image_op(n.op) && !is_reduction(n.op)) continue;  // scalar arithmetic: evaluated on use
    if (is_image_op(n.op) && !l.materialised[i]) continue;    // fused into its reader
    Stage s;
    s.kind = kind_of(n.op);
    s.nodes = {int(i)};
    if (n.op == Op::sep)
      for (std::size_t j = i + 1; j < count; ++j)
        if (l.live[j] && g.nodes[j].op == Op::sep && g.nodes[j].args[0].id == n.args[0].id) s.nodes.push_back(int(j));
    // Exchanges first: the inputs whose halos this stage reads and are not valid yet.
    std::set<int> inputs;
    for (int m : s.nodes)
      for (int r : reads(m)) inputs.insert(r);
    std::vector<std::pair<Halo, int>> exchanges;
    for (int r : inputs) {
      Halo need;
      for (int m : s.nodes) {
        const Node& mn = g.nodes[std::size_t(m)];
        for (std::size_t k = 0; k < mn.args.size(); ++k)
          if (mn.args[k].image && mn.args[k].id == r) need = widest(need, halo_needed(mn, k));
      }
      if ((need.x > 0 || need.y > 0) && !valid[std::size_t(r)]) exchanges.push_back({l.buffer_halo[std::size_t(r)], r});
    }
    std::sort(exchanges.begin(), exchanges.end(), [](const auto& a, const auto& b) {
      return std::pair(a.first.x, a.first.y) < std::pair(b.first.x, b.first.y) ||
             (a.first == b.first && a.second < b.second);
    });
    for (const auto& [halo, r] : exchanges) {
      if (!l.stages.empty() && l.stages.back().kind == Stage::Kind::exchange && l.stages.back().halo == halo &&
          l.stages.size() >= 1)
        l.stages.back().nodes.push_back(r);
      else
        l.stages.push_back({Stage::Kind::exchange, {r}, halo, {}, n.label});  // named after its reader
      valid[std::size_t(r)] = true;
      last_stage[std::size_t(r)] = int(l.stages.size()) - 1;
    }
    for (int m : s.nodes) done[std::size_t(m)] = true;
    // Hysteresis ends on an exchange after which nothing changed: its halo is valid.
    if (n.op == Op::hysteresis) valid[i] = true;
    l.stages.push_back(s);
    for (int r : inputs) last_stage[std::size_t(r)] = int(l.stages.size()) - 1;
    for (int m : s.nodes) last_stage[std::size_t(m)] = std::max(last_stage[std::size_t(m)], int(l.stages.size()) - 1);
  }
  Stage gather{Stage::Kind::gather, {}, {}, {}, "output"};
  for (const auto& o : g.outputs)
    if (o.value.image) gather.nodes.push_back(o.value.id);
  if (!gather.nodes.empty()) {
    l.stages.push_back(gather);
    for (int m : gather.nodes) last_stage[std::size_t(m)] = int(l.stages.size()) - 1;
  }
  for (std::size_t i = 0; i < count; ++i)
    if (last_stage[i] >= 0 && l.materialised[i]) l.stages[std::size_t(last_stage[i])].free_after.push_back(int(i));
    else if (l.live[i] && i == std::size_t(g.input)) l.stages.front().free_after.push_back(int(i));
  l.direct.assign(count, false);
  for (const auto& o : g.outputs) {
    const auto i = std::size_t(o.value.id);
    l.direct[i] = o.value.image && o.value.id != g.input && l.buffer_halo[i] == Halo{};
  }
  return l;
}

std::vector<GatherRun> gather_runs(const Lowered& l, const Stage& gather) {
  std::vector<GatherRun> runs;
  std::vector<bool> gathered(l.direct.size(), false);
  for (int m : gather.nodes) {
    const auto i = std::size_t(m);
    // The first gather of a direct output finds the root's part in place; a second one
    // (the same image named twice) copies it, as any output held in a tile.
    GatherSource source{l.buffer_halo[i], l.direct[i] && !gathered[i]};
    gathered[i] = true;
    if (runs.empty() || !(runs.back().source == source)) runs.push_back({source, {}});
    runs.back().nodes.push_back(m);
  }
  return runs;
}

namespace {

// The image buffers a run allocates, as Program::run does (program_run.cpp): the
// scatter's tile of the input and a tile per computed image (fresh / fresh_view), an
// output nothing reads a halo of computed straight into the root's result image, and
// the root's result image of every other gathered output.
void describe_buffers(const Graph& g, const Lowered& l, const std::vector<std::pair<int, int>>& stage_steps,
                      ProgramDescription& d) {
  using Extent = ProgramBuffer::Extent;
  const std::size_t count = g.nodes.size();
  const int last_step = int(d.steps.size()) - 1;
  const int returned = int(d.steps.size());  // outlives the run
  std::vector<int> dropped(count, -1);  // the step after which a tile is dropped
  for (std::size_t k = 0; k < l.stages.size(); ++k)
    for (int m : l.stages[k].free_after) dropped[std::size_t(m)] = stage_steps[k].second;
  for (std::size_t k = 0; k < l.stages.size(); ++k) {
    const Stage& st = l.stages[k];
    if (st.kind == Stage::Kind::exchange || st.kind == Stage::Kind::reduce) continue;
    if (st.kind == Stage::Kind::gather) {
      // One gather step per run of one source (describe()); an image not in place
      // gets a fresh result image on the root.
      int at = stage_steps[k].first;
      for (const GatherRun& run : gather_runs(l, st)) {
        for (std::size_t j = 0; j < run.nodes.size(); ++j)
          if (!run.source.root_in_place) d.buffers.push_back({Extent::image, Extent::none, {}, at, returned, int(j)});
        ++at;
      }
      continue;
    }
    for (int node : st.nodes) {
      const auto m = std::size_t(node);
      const bool direct = l.direct[m];
      const int freed = direct ? returned : dropped[m] < 0 ? last_step : dropped[m];
      d.buffers.push_back({direct ? Extent::image : Extent::tile, Extent::tile, l.buffer_halo[m], stage_steps[k].first, freed});
    }
  }
}

}  // namespace

ProgramDescription describe(const Graph& g, const Lowered& l, int width, int height) {
  ProgramDescription d;
  d.width = width;
  d.height = height;
  d.halo = l.max_halo;
  auto step = [&](ProgramStep::Kind kind, std::string operation) {
    ProgramStep s;
    s.kind = kind;
    s.operation = std::move(operation);
    d.steps.push_back(s);
    return &d.steps.back();
  };
  auto compute = [&](std::string operation, Primitive p) {
    ProgramStep* s = step(ProgramStep::Kind::compute, std::move(operation));
    s->primitive = p;
    return s;
  };
  std::vector<std::pair<int, int>> stage_steps;  // per stage: its steps [first, last]
  for (std::size_t k = 0; k < l.stages.size(); ++k) {
    const Stage& st = l.stages[k];
    const Node& first = g.nodes[std::size_t(st.nodes.front())];
    const int begin = int(d.steps.size());
    switch (st.kind) {
      case Stage::Kind::scatter: {
        ProgramStep* s = step(ProgramStep::Kind::scatter, st.operation);
        s->halo = st.halo;
        break;
      }
      case Stage::Kind::exchange: {
        ProgramStep* s = step(ProgramStep::Kind::exchange, st.operation);
        s->images = int(st.nodes.size());
        s->halo = st.halo;
        break;
      }
      case Stage::Kind::pixel: {
        ProgramStep* s = compute(first.label, Primitive::pixelwise);
        s->ops = l.pixel[std::size_t(st.nodes.front())].ops;
        break;
      }
      case Stage::Kind::separable: {
        // As separable_filters() runs them: one y pass per distinct y kernel over the
        // tile and the x reach, then one x pass per filter.
        int reach = 0;
        std::vector<const Kernel1D*> ys;
        std::vector<std::string> labels;
        for (int m : st.nodes) {
          const Node& n = g.nodes[std::size_t(m)];
          reach = std::max(reach, n.kx.radius);
          bool seen = false;
          for (const Kernel1D* y : ys) seen = seen || (y->taps == n.ky.taps && y->order == n.ky.order);
          if (!seen) ys.push_back(&n.ky), labels.push_back(n.label);
        }
        for (std::size_t y = 0; y < ys.size(); ++y) {
          ProgramStep* s = compute(labels[y], Primitive::separable);
          s->axis = Axis::y;
          s->taps = ys[y]->size();
          s->region = Halo{reach, 0};
        }
        for (int m : st.nodes) {
          const Node& n = g.nodes[std::size_t(m)];
          ProgramStep* s = compute(n.label, Primitive::separable);
          s->axis = Axis::x;
          s->taps = n.kx.size();
        }
        break;
      }
      case Stage::Kind::neighbourhood: {
        // Each neighbourhood operation is its own kernel: a vectorised filter costs a
        // fraction of what non-maximum suppression's atan2 per pixel does.
        const Primitive p = first.op == Op::nms         ? Primitive::nms
                            : first.op == Op::local_max ? Primitive::local_max
                                                        : Primitive::neighbourhood;
        ProgramStep* s = compute(first.label, p);
        s->taps = first.op == Op::filter2d && first.taps.size() == 25 ? 5 : 3;
        break;
      }
      case Stage::Kind::reduce: {
        // Each reduction's own local sweep (reduce_local): the exact sum's, a minimum's or
        // maximum's, a count's.
        const Primitive sweep = first.op == Op::r_min || first.op == Op::r_max ? Primitive::extremum
                                : first.op == Op::r_count                    ? Primitive::count
                                                                             : Primitive::reduction;
        compute(first.label, sweep)->ops = 1;
        ProgramStep* s = step(ProgramStep::Kind::reduce, first.label);
        // The words the executor's allreduce carries (what the scheduler's
        // allreduce_plan(P, images) prices).
        s->images = reduce_words(first.op);
        s->bytes = 8 * s->images;
        break;
      }
      case Stage::Kind::hysteresis: {
        compute(first.label, Primitive::pixelwise)->ops = 1;  // marks from the strong pixels
        // The growing, once per run, whichever rounds it falls in; the loop's rounds each
        // a scan that grows nothing.
        compute(first.label, Primitive::hysteresis_growth)->taps = 3;
        const int loop = int(d.steps.size());
        ProgramStep* e = step(ProgramStep::Kind::exchange, first.label);
        e->halo = l.buffer_halo[std::size_t(st.nodes.front())];
        compute(first.label, Primitive::hysteresis)->taps = 3;
        ProgramStep* r = step(ProgramStep::Kind::reduce, first.label);
        r->images = kHysteresisWords;
        r->bytes = 8 * r->images;
        r->repeat_first = loop;
        r->expected_rounds = detail::kExpectedHysteresisRounds;
        r->one_tile_rounds = detail::kOneTileHysteresisRounds;
        break;
      }
      case Stage::Kind::gather: {
        for (const GatherRun& run : gather_runs(l, st)) {
          ProgramStep* s = step(ProgramStep::Kind::gather, st.operation);
          s->images = int(run.nodes.size());
          s->halo = run.source.halo;
          s->in_place = run.source.root_in_place;
        }
        break;
      }
    }
    stage_steps.emplace_back(begin, int(d.steps.size()) - 1);
  }
  describe_buffers(g, l, stage_steps, d);
  return d;
}

}  // namespace detail

}  // namespace tessera
