#include "layouts.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "tessera/error.hpp"

namespace tessera::bench {

BlockShape paper_shape(std::int64_t floats, int blocks) {
  BlockShape s;
  s.blocks = int(std::min<std::int64_t>(std::max(blocks, 1), floats));
  const std::int64_t longest = s.blocks > 0 ? (floats + s.blocks - 1) / s.blocks : 0;
  s.stride_floats = 2 * longest;
  s.paper_default = true;
  return s;
}

TileRows parse_tile_rows(std::string_view text) {
  const auto colon = text.find(':');
  TileRows t;
  auto bad = [&] {
    return InvalidArgument("bad tile layout '" + std::string(text) +
                           "': expected W:S (row width and stride in floats, S >= W >= 1)");
  };
  if (colon == std::string_view::npos) throw bad();
  const auto w = text.substr(0, colon), s = text.substr(colon + 1);
  auto r1 = std::from_chars(w.data(), w.data() + w.size(), t.row_floats);
  auto r2 = std::from_chars(s.data(), s.data() + s.size(), t.stride_floats);
  if (r1.ec != std::errc{} || r1.ptr != w.data() + w.size() || r2.ec != std::errc{} ||
      r2.ptr != s.data() + s.size() || t.row_floats < 1 || t.stride_floats < t.row_floats)
    throw bad();
  return t;
}

std::string to_string(const TileRows& t) {
  return std::to_string(t.row_floats) + ":" + std::to_string(t.stride_floats);
}

BlockShape rows_shape(int rows, const TileRows& tile) {
  return {std::max(rows, 1), tile.stride_floats, false};
}

std::int64_t block_length(std::int64_t floats, const BlockShape& shape, int i) {
  if (shape.blocks <= 0) return 0;
  return floats / shape.blocks + (i < floats % shape.blocks ? 1 : 0);
}

std::int64_t extent_floats(std::int64_t floats, const BlockShape& shape) {
  if (shape.blocks <= 0 || floats == 0) return 0;
  const int last = shape.blocks - 1;
  return std::int64_t(last) * shape.stride_floats + block_length(floats, shape, last);
}

}  // namespace tessera::bench
