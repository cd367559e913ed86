#include "tessera/names.hpp"

#include <string>

#include "tessera/error.hpp"

namespace tessera {
namespace {

template <class Enum, std::size_t N>
Enum parse_one_of(std::string_view what, std::string_view name, const std::array<Enum, N>& values) {
  std::string accepted;
  for (Enum v : values) {
    if (to_string(v) == name) return v;
    if (!accepted.empty()) accepted += ", ";
    accepted += to_string(v);
  }
  throw InvalidArgument("unknown " + std::string(what) + " '" + std::string(name) +
                        "' (expected one of: " + accepted + ")");
}

}  // namespace

std::string_view to_string(ScatterAlgorithm a) {
  switch (a) {
    case ScatterAlgorithm::oft:
      return "oft";
    case ScatterAlgorithm::sbt:
      return "sbt";
    case ScatterAlgorithm::mpi:
      return "mpi";
    case ScatterAlgorithm::bcast:
      return "bcast";
  }
  return "?";
}

std::string_view to_string(GatherAlgorithm a) {
  switch (a) {
    case GatherAlgorithm::oft:
      return "oft";
    case GatherAlgorithm::sbt:
      return "sbt";
    case GatherAlgorithm::mpi:
      return "mpi";
  }
  return "?";
}

std::string_view to_string(ExchangeAlgorithm a) {
  switch (a) {
    case ExchangeAlgorithm::four_step:
      return "4step";
    case ExchangeAlgorithm::nonblocking:
      return "nonblocking";
  }
  return "?";
}

std::string_view to_string(Path p) {
  switch (p) {
    case Path::send:
      return "send";
    case Path::recv:
      return "recv";
    case Path::full:
      return "full";
  }
  return "?";
}

std::string_view to_string(Layout l) {
  switch (l) {
    case Layout::cc:
      return "cc";
    case Layout::cn:
      return "cn";
    case Layout::nc:
      return "nc";
    case Layout::nn:
      return "nn";
  }
  return "?";
}

ScatterAlgorithm parse_scatter(std::string_view name) {
  return parse_one_of("scatter algorithm", name, kScatterAlgorithms);
}
GatherAlgorithm parse_gather(std::string_view name) {
  return parse_one_of("gather algorithm", name, kGatherAlgorithms);
}
ExchangeAlgorithm parse_exchange(std::string_view name) {
  return parse_one_of("exchange algorithm", name, kExchangeAlgorithms);
}
Path parse_path(std::string_view name) { return parse_one_of("path", name, kPaths); }
Layout parse_layout(std::string_view name) { return parse_one_of("layout", name, kLayouts); }

std::string_view to_string(Level l) { return l == Level::intra ? "intra" : "inter"; }

Level parse_level(std::string_view name) {
  if (name == "intra") return Level::intra;
  if (name == "inter") return Level::inter;
  throw InvalidArgument("bad level '" + std::string(name) + "' (expected intra or inter)");
}

}  // namespace tessera
