#pragma once
// Message layouts the P-3PC benchmark sends: contiguous, the paper's noncontiguous
// default (blocks with a gap as large as a block), and rows of a tile (the layouts the
// library really produces: halo columns and column strips). Pure.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::bench {

/// Where the values of one noncontiguous message lie: `blocks` runs of nearly equal
/// length (part_size(floats, blocks, i)), block i starting at i * stride_floats.
struct BlockShape {
  int blocks = 1;
  std::int64_t stride_floats = 0;
  /// True for the paper's default spacing (stride = 2 x the longest block), stored in
  /// the database as stride 0.
  bool paper_default = true;
};

/// The paper's noncontiguous layout of `floats` values in `blocks` blocks (fewer if
/// there are fewer values; 0 values give 0 blocks).
BlockShape paper_shape(std::int64_t floats, int blocks);

/// Rows of a tile: `row_floats` values per row, rows `stride_floats` apart.
struct TileRows {
  int row_floats = 0;
  std::int64_t stride_floats = 0;
  friend bool operator==(const TileRows&, const TileRows&) = default;
};

/// Parse "W:S" (row width and row stride in floats, S >= W >= 1). Throws
/// tessera::InvalidArgument with a one-line message otherwise.
TileRows parse_tile_rows(std::string_view text);
std::string to_string(const TileRows& t);

/// `rows` whole tile rows (rows * W values), as a halo or a column strip is sent.
BlockShape rows_shape(int rows, const TileRows& tile);

/// Length in floats of block i (part_size of the values over the blocks).
std::int64_t block_length(std::int64_t floats, const BlockShape& shape, int i);

/// Floats a buffer must hold for this layout (last block's end).
std::int64_t extent_floats(std::int64_t floats, const BlockShape& shape);

}  // namespace tessera::bench
