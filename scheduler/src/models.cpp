#include <algorithm>
#include <cmath>
#include <string>

#include "tessera/error.hpp"
#include "tessera/scheduler/model.hpp"

namespace tessera::scheduler {

std::string_view to_string(ModelKind kind) {
  switch (kind) {
    case ModelKind::p3pc:
      return "p3pc";
    case ModelKind::three_pc:
      return "3pc";
    case ModelKind::loggp_star:
      return "loggp-star";
    case ModelKind::log3p:
      return "log3p";
    case ModelKind::two_log23p:
      return "2log23p";
    case ModelKind::loggp:
      return "loggp";
    case ModelKind::logpc:
      return "logpc";
  }
  return "?";
}

ModelKind parse_model(std::string_view name) {
  for (ModelKind k : kModelKinds)
    if (to_string(k) == name) return k;
  throw InvalidArgument("unknown model '" + std::string(name) +
                        "' (expected p3pc, 3pc, loggp-star, log3p, 2log23p, loggp or logpc)");
}

double logpc_contention_us(double bytes, double interval_us, double us_per_byte, int dimensions,
                           double avg_distance) {
  if (bytes <= 0 || avg_distance <= 1 || us_per_byte <= 0 || dimensions < 1) return 0;
  // Work in channel byte-times (LoGPC's cycle): rho = B m k_d / 2 is then a probability.
  const double t = std::max(interval_us, 0.0) / us_per_byte;
  const double a = (dimensions + 1) * (avg_distance - 1) * bytes * bytes / 2;
  const double b = bytes * avg_distance / 2;
  // Closing the model (eq. 7): m (t + a m / (1 - b m)) = 1, i.e.
  // (a - b t) m^2 + (t + b) m - 1 = 0; the root below 1/b, in its cancellation-free form.
  const double bq = t + b;
  const double m = 2 / (bq + std::sqrt((t - b) * (t - b) + 4 * a));
  const double denom = 1 - b * m;
  if (denom <= 0) return 0;
  return a * m / denom * us_per_byte;
}

namespace detail {

bool noncontig_send(Layout l) { return l == Layout::nc || l == Layout::nn; }
bool noncontig_recv(Layout l) { return l == Layout::cn || l == Layout::nn; }

class P3pcModel final : public CostModel {
 public:
  explicit P3pcModel(const MachineParams& m) {
    for (Level lv : {Level::intra, Level::inter}) {
      tables_[int(lv)] = m.p3pc_for(lv);
      if (!tables_[int(lv)].complete())
        throw InvalidArgument("machine '" + m.name + "': P-3PC table lacks some path/layout curves");
    }
  }
  double time_us(const Message& m) const override {
    // Extending a noisy last segment far past the measured sizes can go below zero.
    return std::max(0.0, tables_[int(m.level)].time_us(m.path, m.layout, m.bytes, m.row_bytes));
  }
  ModelKind kind() const override { return ModelKind::p3pc; }

 private:
  std::array<P3pcTable, 2> tables_;
};

// 3PC: one straight line per path (the cc curve), t_c the value at 0 bytes and t_a the
// least-squares slope through it, so a hand calculation reproduces it.
class ThreePcModel final : public CostModel {
 public:
  explicit ThreePcModel(const MachineParams& m) {
    for (Level lv : {Level::intra, Level::inter}) {
      const auto& t = m.p3pc_for(lv);
      for (Path p : kPaths) {
        const auto& c = t.curve(p, Layout::cc);
        if (c.empty()) throw InvalidArgument("machine '" + m.name + "': no cc curve for 3PC");
        const double tc = c(0.0);
        double num = 0, den = 0;
        for (std::size_t i = 0; i < c.xs().size(); ++i) {
          num += c.xs()[i] * (c.ys()[i] - tc);
          den += c.xs()[i] * c.xs()[i];
        }
        lines_[int(lv)][int(p)] = {tc, den > 0 ? num / den : 0.0};
      }
    }
  }
  double time_us(const Message& m) const override {
    const auto [tc, ta] = lines_[int(m.level)][int(m.path)];
    return std::max(0.0, tc + ta * m.bytes);
  }
  ModelKind kind() const override { return ModelKind::three_pc; }

 private:
  std::array<std::array<std::pair<double, double>, 3>, 2> lines_;
};

// LogGP*: the paper's reduction g = t_cs, L = t_cf, G = t_af,cc (piecewise linear).
class LoggpStarModel final : public CostModel {
 public:
  explicit LoggpStarModel(const MachineParams& m) {
    for (Level lv : {Level::intra, Level::inter}) {
      const auto& t = m.p3pc_for(lv);
      const auto& send = t.curve(Path::send, Layout::cc);
      const auto& full = t.curve(Path::full, Layout::cc);
      if (send.empty() || full.empty())
        throw InvalidArgument("machine '" + m.name + "': no cc curves for loggp-star");
      p_[int(lv)] = {send(0.0), full(0.0), full};
    }
  }
  double time_us(const Message& m) const override {
    const auto& p = p_[int(m.level)];
    const double additional = p.full(m.bytes) - p.L;
    return std::max(0.0, (m.path == Path::full ? p.L : p.g) + additional);
  }
  ModelKind kind() const override { return ModelKind::loggp_star; }

 private:
  struct Params {
    double g = 0, L = 0;
    PiecewiseLinear full;
  };
  std::array<Params, 2> p_;
};

// Block size of the benchmarker's strided log3P messages (one double), bytes.
constexpr double kLog3pBlockBytes = 8.0;

// log3P / 2log{2,3}P: T = o_mw + l_mw + o_net for the full path; the sender and the
// receiver each carry half the middleware cost (log3P paper 4.3.3: P*(o_mw/2 + l_mw/2))
// and each the whole network overhead (see time_us).
class Log3pModel final : public CostModel {
 public:
  Log3pModel(const MachineParams& m, bool two_level) : two_level_(two_level) {
    for (Level lv : {Level::intra, Level::inter}) {
      Log3pLevel p = m.log3p[int(lv)];
      if (p.empty()) {
        p = m.log3p[1 - int(lv)];
        // Borrowing inter-node numbers for intra pairs: drop the network term (eq. 4).
        if (two_level && lv == Level::intra && !p.empty()) p.o_net = {};
      }
      if (p.empty()) p = log3p_from_p3pc(m.p3pc_for(lv));
      if (p.l_mw.empty()) p.l_mw = PiecewiseLinear({{0.0, 0.0}});
      if (p.o_net.empty()) p.o_net = PiecewiseLinear({{0.0, 0.0}});
      levels_[int(lv)] = std::move(p);
    }
  }
  double time_us(const Message& m) const override {
    // log3P has one level: every pair is priced with the inter-node parameters.
    const Level lv = two_level_ ? m.level : Level::inter;
    const auto& p = levels_[int(lv)];
    const double o = p.o_mw(m.bytes);
    // l_mw is for both ends noncontiguous, measured with the paper's unit block (one
    // 8-byte double per block). The middleware's extra work is per block, so rows of
    // row_bytes (the library's tiles and halos) have row_bytes / 8 times fewer blocks.
    const double blocks_scale = m.row_bytes > kLog3pBlockBytes ? kLog3pBlockBytes / m.row_bytes : 1.0;
    const double l_end = p.l_mw(m.bytes) / 2 * blocks_scale;
    const double ls = noncontig_send(m.layout) ? l_end : 0.0;
    const double lr = noncontig_recv(m.layout) ? l_end : 0.0;
    // 2log{2,3}P eq. 4 gives intra-node messages no network term (n = 2): an intra level
    // without a measured o_net gets 0 (see the constructor). When the benchmarker did
    // measure one on shared memory (the transport's copy), it is part of the cost and kept.
    const double net = p.o_net(m.bytes);
    switch (m.path) {
      // The network overhead occupies both ends: a blocking send ends when the network
      // has taken the data, and a rank's link carries one message at a time, so
      // messages converging on one receiver (a gather) queue there.
      case Path::send:
        return std::max(0.0, o / 2 + ls + net);
      case Path::recv:
        return std::max(0.0, o / 2 + lr + net);
      case Path::full:
        return std::max(0.0, o + ls + lr + net);
    }
    return 0;
  }
  ModelKind kind() const override { return two_level_ ? ModelKind::two_log23p : ModelKind::log3p; }

 private:
  bool two_level_;
  std::array<Log3pLevel, 2> levels_;
};

// LogGP with one parameter set per protocol range: send = max(o, g) + (k-1)G (the
// sender may start the next message then), recv = o, full = 2o + L + (k-1)G.
class LoggpModel : public CostModel {
 public:
  explicit LoggpModel(const MachineParams& m) {
    for (Level lv : {Level::intra, Level::inter}) {
      auto r = m.loggp[int(lv)];
      if (r.empty()) r = m.loggp[1 - int(lv)];
      if (r.empty()) r = loggp_from_p3pc(m.p3pc_for(lv));
      std::stable_sort(r.begin(), r.end(),
                       [](const auto& a, const auto& b) { return a.min_bytes < b.min_bytes; });
      ranges_[int(lv)] = std::move(r);
    }
  }
  const LoggpParams& range(Level lv, double bytes) const {
    const auto& r = ranges_[int(lv)];
    std::size_t i = 0;
    while (i + 1 < r.size() && r[i + 1].min_bytes <= bytes) ++i;
    return r[i];
  }
  double time_us(const Message& m) const override {
    const auto& p = range(m.level, m.bytes);
    const double bytes_g = std::max(m.bytes - 1, 0.0) * p.G;
    switch (m.path) {
      case Path::send:
        return std::max(p.o, p.g) + bytes_g;
      case Path::recv:
        return p.o;
      case Path::full:
        return 2 * p.o + p.L + bytes_g;
    }
    return 0;
  }
  ModelKind kind() const override { return ModelKind::loggp; }

 private:
  std::array<std::vector<LoggpParams>, 2> ranges_;
};

// LoGPC: LogGP plus the contention delay C_n on the full path of messages that many
// ranks inject at once; each injecting rank sends back to back (interval = its send
// time), diluted by the fraction of ranks that inject.
class LogpcModel final : public LoggpModel {
 public:
  explicit LogpcModel(const MachineParams& m) : LoggpModel(m), params_(m.logpc) {}
  double time_us(const Message& m) const override {
    const double base = LoggpModel::time_us(m);
    if (m.path != Path::full || m.concurrent <= 1) return base;
    const auto& p = range(m.level, m.bytes);
    const double kd = params_.avg_distance > 0 ? params_.avg_distance : mesh_distance(m.procs);
    const double per_byte = params_.channel_us_per_byte.value_or(p.G);
    const double interval = LoggpModel::time_us({Path::send, m.layout, m.bytes, m.level}) *
                            double(std::max(m.procs, m.concurrent)) / double(m.concurrent);
    return base + logpc_contention_us(m.bytes, interval, per_byte, params_.dimensions, kd);
  }
  ModelKind kind() const override { return ModelKind::logpc; }
  bool uses_concurrency() const override { return true; }

 private:
  static double mesh_distance(int procs) {
    const double k = std::ceil(std::sqrt(double(std::max(procs, 1))));
    return (k * k - 1) / (3 * k);
  }
  LogpcParams params_;
};

}  // namespace detail

std::unique_ptr<CostModel> make_model(ModelKind kind, const MachineParams& machine) {
  switch (kind) {
    case ModelKind::p3pc:
      return std::make_unique<detail::P3pcModel>(machine);
    case ModelKind::three_pc:
      return std::make_unique<detail::ThreePcModel>(machine);
    case ModelKind::loggp_star:
      return std::make_unique<detail::LoggpStarModel>(machine);
    case ModelKind::log3p:
      return std::make_unique<detail::Log3pModel>(machine, false);
    case ModelKind::two_log23p:
      return std::make_unique<detail::Log3pModel>(machine, true);
    case ModelKind::loggp:
      return std::make_unique<detail::LoggpModel>(machine);
    case ModelKind::logpc:
      return std::make_unique<detail::LogpcModel>(machine);
  }
  throw InvalidArgument("unknown model");
}

}  // namespace tessera::scheduler
