#pragma once
// The vocabulary shared by the library, benchmarker, perfdb and scheduler (SPEC "Names").
// Pure: no MPI, no SQL.
#include <array>
#include <string>
#include <string_view>

namespace tessera {

/// Scatter algorithms: one-level flat tree, spanning binomial tree (any P),
/// MPI_Scatterv, and broadcast of the whole image (each rank keeps its part).
enum class ScatterAlgorithm { oft, sbt, mpi, bcast };
/// Gather algorithms: one-level flat tree, spanning binomial tree, MPI_Gatherv.
enum class GatherAlgorithm { oft, sbt, mpi };
/// Border-exchange algorithms. `four_step` is the paper's Fig. 7 (right, left, down,
/// up; blocking; derived datatypes). `nonblocking` posts all receives and sends of
/// one axis at once (x then y, so corners still arrive).
enum class ExchangeAlgorithm { four_step, nonblocking };
/// P-3PC communication paths.
enum class Path { send, recv, full };
/// Memory layout of a message at sender then receiver (c = contiguous).
enum class Layout { cc, cn, nc, nn };
/// Where a pair of ranks sits: same node (shared memory) or different nodes. The
/// perfdb stores it per record; the scheduler prices each pair with its level.
enum class Level { intra, inter };

inline constexpr std::array kScatterAlgorithms{ScatterAlgorithm::oft, ScatterAlgorithm::sbt,
                                               ScatterAlgorithm::mpi, ScatterAlgorithm::bcast};
inline constexpr std::array kGatherAlgorithms{GatherAlgorithm::oft, GatherAlgorithm::sbt,
                                              GatherAlgorithm::mpi};
inline constexpr std::array kExchangeAlgorithms{ExchangeAlgorithm::four_step, ExchangeAlgorithm::nonblocking};
inline constexpr std::array kPaths{Path::send, Path::recv, Path::full};
inline constexpr std::array kLayouts{Layout::cc, Layout::cn, Layout::nc, Layout::nn};

/// Canonical lowercase names ("oft", "sbt", "mpi", "bcast", "4step", "nonblocking",
/// "send", "recv", "full", "cc", ...). Local.
std::string_view to_string(ScatterAlgorithm a);
std::string_view to_string(GatherAlgorithm a);
std::string_view to_string(ExchangeAlgorithm a);
std::string_view to_string(Path p);
std::string_view to_string(Layout l);
std::string_view to_string(Level l);  ///< "intra" / "inter"

/// Parse a canonical name; throws InvalidArgument naming the bad value and the
/// accepted ones. Local.
ScatterAlgorithm parse_scatter(std::string_view name);
GatherAlgorithm parse_gather(std::string_view name);
ExchangeAlgorithm parse_exchange(std::string_view name);
Path parse_path(std::string_view name);
Layout parse_layout(std::string_view name);
Level parse_level(std::string_view name);

/// Layout from "is the sender's block contiguous" and "is the receiver's".
constexpr Layout make_layout(bool send_contiguous, bool recv_contiguous) {
  if (send_contiguous) return recv_contiguous ? Layout::cc : Layout::cn;
  return recv_contiguous ? Layout::nc : Layout::nn;
}

}  // namespace tessera
