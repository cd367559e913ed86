#pragma once
// Point-to-point cost models behind one small interface (cf. Halide's autoscheduler
// CostModel): a model prices one message on one communication path. Pure.
#include <array>
#include <memory>
#include <string_view>

#include "tessera/names.hpp"
#include "tessera/scheduler/machine.hpp"

namespace tessera::scheduler {

/// The models of SPEC "Names".
enum class ModelKind { p3pc, three_pc, loggp_star, log3p, two_log23p, loggp, logpc };
inline constexpr std::array kModelKinds{ModelKind::p3pc,  ModelKind::three_pc,   ModelKind::loggp_star,
                                        ModelKind::log3p, ModelKind::two_log23p, ModelKind::loggp,
                                        ModelKind::logpc};
/// "p3pc", "3pc", "loggp-star", "log3p", "2log23p", "loggp", "logpc".
std::string_view to_string(ModelKind kind);
/// Throws InvalidArgument naming the value and the accepted names.
ModelKind parse_model(std::string_view name);

/// One message to price.
struct Message {
  Path path = Path::full;      ///< which P-3PC path: sender busy, receiver busy, end to end
  Layout layout = Layout::cc;  ///< sender then receiver contiguity
  double bytes = 0;            ///< payload, bytes (>= 0)
  Level level = Level::inter;  ///< intra- or inter-node pair
  int concurrent = 1;          ///< ranks injecting messages at the same time (LoGPC)
  int procs = 1;               ///< ranks in the run (LoGPC distance when not given)
  /// Length of one row of the noncontiguous side(s), bytes: a tile's width for a scatter
  /// or gather, the halo width for an x-border. 0 = unknown (the paper's 100-block shape).
  double row_bytes = 0;
};

/// Prices point-to-point messages. Implementations are immutable after construction
/// and safe to share between threads.
class CostModel {
 public:
  virtual ~CostModel() = default;
  /// Time in µs of `m` on its path. Local, pure.
  virtual double time_us(const Message& m) const = 0;
  virtual ModelKind kind() const = 0;
  /// True if time_us depends on Message::concurrent / procs (LoGPC); lets callers reuse
  /// prices of messages that differ only there.
  virtual bool uses_concurrency() const { return false; }
  double send(Layout l, double bytes, Level lv = Level::inter, double row_bytes = 0) const {
    return time_us({Path::send, l, bytes, lv, 1, 1, row_bytes});
  }
  double recv(Layout l, double bytes, Level lv = Level::inter, double row_bytes = 0) const {
    return time_us({Path::recv, l, bytes, lv, 1, 1, row_bytes});
  }
  double full(Layout l, double bytes, Level lv = Level::inter, double row_bytes = 0) const {
    return time_us({Path::full, l, bytes, lv, 1, 1, row_bytes});
  }
};

/// Builds `kind` over `machine`'s parameters. Models whose own parameters were not
/// measured derive them from the P-3PC tables (loggp_from_p3pc, log3p_from_p3pc).
/// Throws InvalidArgument if the machine lacks what the model needs.
std::unique_ptr<CostModel> make_model(ModelKind kind, const MachineParams& machine);

/// The LoGPC contention delay C_n (eq. 6-7, solved in closed form) in µs for a message
/// of `bytes` whose sender injects one message every `interval_us` without contention.
/// 0 when k_d <= 1 or bytes == 0.
double logpc_contention_us(double bytes, double interval_us, double us_per_byte, int dimensions,
                           double avg_distance);

}  // namespace tessera::scheduler
