#pragma once
// The distributed float image: scatter, border exchange and gather over a processor
// grid. Each runs a communication plan (comm_plan.hpp), the same plan the scheduler
// prices; a plan and its MPI datatypes are built once per object and reused by every
// run. Collective over the Team of the plan (inactive ranks take no part and must not
// build or run these).
#include <memory>

#include "tessera/comm_plan.hpp"
#include "tessera/image.hpp"
#include "tessera/names.hpp"
#include "tessera/partition.hpp"
#include "tessera/phases.hpp"
#include "tessera/session.hpp"

namespace tessera {

/// One rank's part of a distributed image: its tile, stored with `halo` pixels of
/// room on every side (the halo is filled by a BorderExchange).
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
  /// The first float of the haloed buffer (global pixel (x0 - halo.x, y0 - halo.y)).
  float* data() { return buffer_.data(); }

 private:
  Partition partition_{1, 1, Grid{1, 1}};
  int rank_ = 0;
  Box box_;
  Halo halo_;
  Image buffer_;  ///< (w + 2 halo.x) x (h + 2 halo.y)
};

namespace detail {
struct Prepared;  // a plan's steps for one rank with their datatypes (src/mpi)
}

/// A scatter of `partition` from the root with `algorithm`: built once, run many times.
/// Construction is local (no messages). Precondition: team.size() == partition.procs().
class Scatter {
 public:
  Scatter(const Team& team, const Partition& partition, Halo halo, ScatterAlgorithm algorithm);
  ~Scatter();
  Scatter(Scatter&&) noexcept;
  /// Distributes `image` (read on the root only) so that each rank holds its tile.
  /// Collective over the team.
  Tile run(const Image& image) const;
  const CommPlan& plan() const;
  /// Appends each later run's step times to `record` (nullptr: stop). Local.
  void time_steps(StepSeconds* record);

 private:
  const Team* team_;
  std::unique_ptr<detail::Prepared> prepared_;
};

/// The border exchange of a tile: neighbour data into its halo, mirrored pixels
/// (BORDER_REFLECT_101) at the image's edges. Split as begin() (post the first
/// messages) and end() (complete them and run the rest), so interior work can run in
/// between, as PETSc's DMGlobalToLocalBegin/End. Construction is local (no messages).
/// Precondition: team.size() == partition.procs().
class BorderExchange {
 public:
  BorderExchange(const Team& team, const Partition& partition, Halo halo, ExchangeAlgorithm algorithm);
  ~BorderExchange();
  BorderExchange(BorderExchange&&) noexcept;
  /// Runs the plan up to its first wait on `tile` (this rank's tile of the partition,
  /// with the plan's halo), which must stay alive until end(). Neighbour-wise collective.
  void begin(Tile& tile);
  /// Runs the rest of the plan. Neighbour-wise collective.
  void end();
  /// begin() then end().
  void run(Tile& tile) {
    begin(tile);
    end();
  }
  const CommPlan& plan() const;
  /// Appends each later run's step times to `record` (nullptr: stop); a run is
  /// begin() and end(). Local.
  void time_steps(StepSeconds* record);

 private:
  const Team* team_;
  Tile* tile_ = nullptr;
  std::unique_ptr<detail::Prepared> prepared_;
  std::size_t next_ = 0;  // first step not yet run
};

/// A gather of one tile-sized image per rank into a whole image on the root.
/// Construction is local. Precondition: team.size() == partition.procs().
class Gather {
 public:
  /// `source`: where each rank's result lives (gather_plan): a tile-sized buffer, or the
  /// interior of a tile with `source.halo`; whether the root's already is its tile of
  /// the result image.
  Gather(const Team& team, const Partition& partition, GatherAlgorithm algorithm, GatherSource source = {});
  ~Gather();
  Gather(Gather&&) noexcept;
  /// `local` is this rank's tile (its box of the partition), laid out as the source
  /// says; `whole` is allocated by the caller on the root (image-sized; ignored
  /// elsewhere). Runs the plan's steps and nothing else: InvalidArgument if `local` is
  /// not where the source puts it. Collective over the team.
  void run(ConstView local, Image& whole) const;
  const CommPlan& plan() const;
  const GatherSource& source() const;
  /// Appends each later run's step times to `record` (nullptr: stop). Local.
  void time_steps(StepSeconds* record);

 private:
  const Team* team_;
  std::unique_ptr<detail::Prepared> prepared_;
  GatherSource source_;
};

/// One-shot forms: build, run once. The gathers take their source from `local` (a
/// tile's interior: the halo its row spacing implies; the root in place if `local` is
/// its tile of `whole`); rows spaced otherwise are packed into a buffer first.
Tile scatter(const Team& team, const Image& image, const Partition& partition, Halo halo,
             ScatterAlgorithm algorithm);
void exchange_borders(const Team& team, Tile& tile, ExchangeAlgorithm algorithm);
Image gather(const Team& team, ConstView local, const Partition& partition, GatherAlgorithm algorithm);
void gather_into(const Team& team, ConstView local, const Partition& partition, GatherAlgorithm algorithm,
                 Image& whole);

}  // namespace tessera
