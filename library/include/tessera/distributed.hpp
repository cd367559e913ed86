#pragma once
// The distributed float image: scatter, border exchange and gather over a processor
// grid, with the algorithms named in names.hpp. Collective over the ranks of the
// plan (ranks beyond plan.procs() take no part and must not call these).
#include <span>

#include "tessera/image.hpp"
#include "tessera/names.hpp"
#include "tessera/partition.hpp"

namespace tessera {

namespace detail {
struct Comm;
}

/// One rank's part of a distributed image: its tile, stored with `halo` pixels of
/// room on every side (the halo is filled by exchange_borders()).
class Tile {
 public:
  Tile() = default;
  Tile(const Partition& partition, int rank, Halo halo);
  const Partition& partition() const { return partition_; }
  int rank() const { return rank_; }
  const Box& box() const { return box_; }
  Halo halo() const { return halo_; }
  /// The w x h interior; view.sub(-halo.x, -halo.y, ...) reaches the halo.
  View interior() { return buffer_.view().sub(halo_.x, halo_.y, box_.width, box_.height); }
  ConstView interior() const { return buffer_.view().sub(halo_.x, halo_.y, box_.width, box_.height); }
  std::ptrdiff_t stride() const { return box_.width + 2 * halo_.x; }

 private:
  Partition partition_{1, 1, Grid{1, 1}};
  int rank_ = 0;
  Box box_;
  Halo halo_;
  Image buffer_;  ///< (w + 2 halo.x) x (h + 2 halo.y)
};

/// Distributes `image` (read on the root only; ignored elsewhere) so that each rank
/// holds its tile of `partition`. Only the root ever holds the whole image, except
/// with ScatterAlgorithm::bcast. Collective.
Tile scatter(const detail::Comm& comm, const Image& image, const Partition& partition, Halo halo,
             ScatterAlgorithm algorithm);

/// Fills the tile's halo: neighbour data inside the image, mirrored pixels
/// (BORDER_REFLECT_101) at the image's edges. Neighbour-wise collective.
void exchange_borders(const detail::Comm& comm, Tile& tile, ExchangeAlgorithm algorithm);

/// Collects one w x h image per rank (its tile's box of `partition`) into a whole
/// image on the root; returns an empty Image elsewhere. Collective.
Image gather(const detail::Comm& comm, ConstView local, const Partition& partition,
             GatherAlgorithm algorithm);

/// As gather(), into `whole` (allocated by the caller on the root, image-sized;
/// ignored elsewhere). If the root's `local` already is its tile inside `whole`,
/// nothing is copied for it. Collective.
void gather_into(const detail::Comm& comm, ConstView local, const Partition& partition,
                 GatherAlgorithm algorithm, Image& whole);

}  // namespace tessera
