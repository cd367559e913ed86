#pragma once
// Which of the operation library's primitive kernels (tessera::Primitive) a compute row
// of the performance database times: the one mapping from perfdb operation names to
// primitives, for the benchmarker (which threads a kernel runs on) and for planning
// (which rows price which compute steps). Pure, header-only.
#include <optional>
#include <string_view>

#include "tessera/perfdb/records.hpp"
#include "tessera/program_description.hpp"

namespace tessera::perfdb {

/// The primitive kernel a row of `operation` times (kComputePixelwise ...), without
/// kComputeFromMemorySuffix; nullopt for any other operation.
inline std::optional<Primitive> primitive_of(std::string_view operation) {
  struct Name {
    std::string_view operation;
    Primitive primitive;
  };
  static constexpr Name kNames[] = {
      {kComputePixelwise, Primitive::pixelwise},   {kComputeSeparable, Primitive::separable},
      {kComputeNeighbourhood, Primitive::neighbourhood}, {kComputeReduction, Primitive::reduction},
      {kComputeNms, Primitive::nms},               {kComputeLocalMax, Primitive::local_max},
      {kComputeHysteresis, Primitive::hysteresis}, {kComputeHysteresisGrowth, Primitive::hysteresis_growth},
      {kComputeExtremum, Primitive::extremum},     {kComputeCount, Primitive::count}};
  for (const Name& n : kNames)
    if (n.operation == operation) return n.primitive;
  return std::nullopt;
}

}  // namespace tessera::perfdb
