#pragma once
// Decomposition arithmetic (SPEC "Grids and images"): pure, no MPI.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

/// A logical processor grid X x Y: X ranks along the image width (columns), Y along
/// the height (rows). Rank r sits at grid column r % X, grid row r / X.
struct Grid {
  int x = 1;
  int y = 1;
  int procs() const { return x * y; }
  int column_of(int rank) const { return rank % x; }
  int row_of(int rank) const { return rank / x; }
  int rank_at(int column, int row) const { return row * x + column; }
  friend bool operator==(const Grid&, const Grid&) = default;
};

/// "XxY" (e.g. "2x8"). Local.
std::string to_string(Grid g);
/// Parse "XxY" with X, Y >= 1; throws InvalidArgument otherwise. Local.
Grid parse_grid(std::string_view text);
/// Every grid with X*Y == procs, ordered by X ascending (1xP first, Px1 last).
std::vector<Grid> grids_for(int procs);

/// A half-open rectangle of pixels in global image coordinates.
struct Box {
  int x0 = 0, y0 = 0;  ///< first column, first row
  int width = 0, height = 0;
  int x1() const { return x0 + width; }
  int y1() const { return y0 + height; }
  std::size_t area() const { return std::size_t(width) * std::size_t(height); }
  bool empty() const { return width <= 0 || height <= 0; }
  bool contains(int x, int y) const { return x >= x0 && x < x1() && y >= y0 && y < y1(); }
  friend bool operator==(const Box&, const Box&) = default;
};

/// Intersection of two boxes (empty box if they do not overlap).
Box intersect(const Box& a, const Box& b);

/// Size of part i when extent n is split into p parts as evenly as possible:
/// n / p + (i < n % p). Preconditions: p >= 1, 0 <= i < p, n >= 0.
int part_size(int n, int p, int i);
/// Offset of part i (sum of the sizes of parts 0..i-1).
int part_offset(int n, int p, int i);

/// The decomposition of a width x height image over a grid. Pure value.
class Partition {
 public:
  /// Throws InvalidArgument if width/height < 1 or the grid has a zero dimension.
  Partition(int width, int height, Grid grid);
  int width() const { return width_; }
  int height() const { return height_; }
  const Grid& grid() const { return grid_; }
  int procs() const { return grid_.procs(); }
  /// The tile owned by rank r (0 <= r < procs()).
  Box tile(int rank) const;
  Box image() const { return Box{0, 0, width_, height_}; }
  /// Smallest tile width and height over all ranks.
  int min_tile_width() const { return part_size(width_, grid_.x, grid_.x - 1); }
  int min_tile_height() const { return part_size(height_, grid_.y, grid_.y - 1); }
  /// Pixels of the tiles of ranks [0, r) (0 <= r <= procs()). O(1).
  std::size_t area_before(int rank) const;
  /// The distinct tile shapes (at most four: SPEC's split gives two widths and two
  /// heights) with the number of ranks of each.
  struct Shape {
    int width = 0, height = 0, count = 0;
  };
  std::vector<Shape> tile_shapes() const;
  /// Rank of the neighbour at (dx, dy) in grid steps, or -1 at the grid's edge.
  int neighbour(int rank, int dx, int dy) const;

 private:
  int width_, height_;
  Grid grid_;
};

/// Halo widths: pixels of neighbour data needed on each side along x and y.
struct Halo {
  int x = 0;
  int y = 0;
  friend bool operator==(const Halo&, const Halo&) = default;
};

/// Why a partition cannot run with a halo, or empty if it can. On an axis split over
/// several tiles, every tile must be at least as wide (tall) as the halo so that each
/// neighbour can send it (mirroring at the image's edges then needs one reflection);
/// on an axis one tile covers, any size works, even smaller than the halo (the tile
/// mirrors itself as often as needed). A tile with its halo must fit int sizes.
std::string infeasibility(const Partition& partition, Halo halo);
/// Throws InfeasiblePlan with infeasibility()'s reason, if any.
void require_feasible(const Partition& partition, Halo halo);

}  // namespace tessera
