#include "tessera/distributed.hpp"

#include <algorithm>
#include <numeric>

#include "comm.hpp"
#include "tessera/error.hpp"
#include "tessera/gaussian.hpp"
#include "tessera/tree.hpp"

namespace tessera {

using detail::block_type;
using detail::check;
using detail::Comm;
using detail::Datatype;

Tile::Tile(const Partition& partition, int rank, Halo halo)
    : partition_(partition),
      rank_(rank),
      box_(partition.tile(rank)),
      halo_(halo),
      buffer_(box_.width + 2 * halo.x, box_.height + 2 * halo.y) {}

namespace {

constexpr int kScatterTag = 101;
constexpr int kGatherTag = 102;
constexpr int kExchangeTag = 103;

std::ptrdiff_t offset_in(const Box& b, int image_width) { return std::ptrdiff_t(b.y0) * image_width + b.x0; }

std::vector<Box> tiles_of(const Partition& p, int first, int last) {
  std::vector<Box> boxes;
  for (int r = first; r < last; ++r) boxes.push_back(p.tile(r));
  return boxes;
}

std::size_t floats_of(const std::vector<Box>& boxes) {
  std::size_t n = 0;
  for (const Box& b : boxes) n += b.area();
  return n;
}

void copy_block(ConstView from, View to) {
  if (from.data == to.data && from.stride == to.stride) return;  // already in place
  for (int y = 0; y < from.height; ++y) std::copy_n(from.row(y), from.width, to.row(y));
}

// The tiles of ranks [first, last) inside the root's whole image, as one datatype
// whose buffer origin is the image's first pixel.
Datatype subtree_type_in_image(const Partition& p, int first, int last) {
  auto boxes = tiles_of(p, first, last);
  if (detail::contiguous_in_image(boxes, p.width())) {
    // Rank-order bands of full rows: one contiguous run starting at the first band.
    MPI_Datatype t;
    const MPI_Aint start = MPI_Aint(offset_in(boxes.front(), p.width())) * MPI_Aint(sizeof(float));
    MPI_Datatype run;
    check(MPI_Type_contiguous(int(floats_of(boxes)), MPI_FLOAT, &run), "MPI_Type_contiguous");
    int one = 1;
    check(MPI_Type_create_struct(1, &one, &start, &run, &t), "MPI_Type_create_struct");
    MPI_Type_free(&run);
    check(MPI_Type_commit(&t), "MPI_Type_commit");
    return Datatype(t);
  }
  std::vector<std::ptrdiff_t> offsets;
  for (const Box& b : boxes) offsets.push_back(offset_in(b, p.width()));
  return detail::blocks_type(boxes, offsets, p.width());
}

// Staging buffer of a subtree: the tiles of ranks [first, last), each contiguous,
// back to back in rank order. chunk_offset() gives where rank r's tile starts.
struct Staging {
  int first = 0;
  std::vector<std::size_t> starts;  // per rank in [first, last], floats
  detail::FloatBuffer data;
  Staging(const Partition& p, int first_rank, int last_rank) : first(first_rank) {
    starts.push_back(0);
    for (int r = first_rank; r < last_rank; ++r) starts.push_back(starts.back() + p.tile(r).area());
    data = detail::allocate_floats(starts.back());
  }
  std::size_t size() const { return starts.back(); }
  float* chunk(int rank) { return data.get() + starts[std::size_t(rank - first)]; }
  std::size_t floats(int from, int to) const {
    return starts[std::size_t(to - first)] - starts[std::size_t(from - first)];
  }
};

void put_own_tile(ConstView from, Tile& tile) { copy_block(from, tile.interior()); }

void send_floats(const Comm& c, const float* data, std::size_t n, int to, int tag) {
  check(MPI_Send(data, int(n), MPI_FLOAT, to, tag, c.comm), "MPI_Send");
}
void recv_floats(const Comm& c, float* data, std::size_t n, int from, int tag) {
  check(MPI_Recv(data, int(n), MPI_FLOAT, from, tag, c.comm, MPI_STATUS_IGNORE), "MPI_Recv");
}

Tile scatter_oft(const Comm& c, const Image& image, const Partition& p, Halo halo) {
  Tile tile(p, c.rank, halo);
  if (c.rank == 0) {
    for (int r = 1; r < c.size; ++r) {
      const Box b = p.tile(r);
      Datatype t = block_type(b.width, b.height, p.width());
      check(MPI_Send(image.data() + offset_in(b, p.width()), 1, t.get(), r, kScatterTag, c.comm), "MPI_Send");
    }
    put_own_tile(image.view().sub(0, 0, tile.box().width, tile.box().height), tile);
  } else {
    Image mine(tile.box().width, tile.box().height);
    recv_floats(c, mine.data(), tile.box().area(), 0, kScatterTag);
    put_own_tile(mine.view(), tile);
  }
  return tile;
}

Tile scatter_sbt(const Comm& c, const Image& image, const Partition& p, Halo halo) {
  Tile tile(p, c.rank, halo);
  if (c.rank == 0) {
    for (int child : sbt_children(0, c.size)) {
      Datatype t = subtree_type_in_image(p, child, sbt_subtree_end(child, c.size));
      check(MPI_Send(image.data(), 1, t.get(), child, kScatterTag, c.comm), "MPI_Send");
    }
    put_own_tile(image.view().sub(0, 0, tile.box().width, tile.box().height), tile);
    return tile;
  }
  const int end = sbt_subtree_end(c.rank, c.size);
  Staging staging(p, c.rank, end);
  recv_floats(c, staging.data.get(), staging.size(), sbt_parent(c.rank), kScatterTag);
  for (int child : sbt_children(c.rank, c.size))
    send_floats(c, staging.chunk(child), staging.floats(child, sbt_subtree_end(child, c.size)), child,
                kScatterTag);
  const Box& b = tile.box();
  put_own_tile(ConstView{staging.chunk(c.rank), b.width, b.height, b.width}, tile);
  return tile;
}

// MPI's own collectives. MPI_Scatterv takes one datatype for every rank, so it
// serves when tiles are row bands (contiguous, counts vary) or all the same shape
// (one vector type resized to a float, displacements at the tile origins); for
// uneven 2-D tiles MPI_Alltoallw, the collective with per-rank datatypes, does it.
enum class MpiShape { bands, uniform, uneven };

MpiShape mpi_shape(const Partition& p) {
  if (p.grid().x == 1) return MpiShape::bands;
  if (p.width() % p.grid().x == 0 && p.height() % p.grid().y == 0) return MpiShape::uniform;
  return MpiShape::uneven;
}

Datatype resized_tile_type(const Partition& p) {
  const Box b = p.tile(0);
  Datatype block = block_type(b.width, b.height, p.width());
  MPI_Datatype t;
  check(MPI_Type_create_resized(block.get(), 0, sizeof(float), &t), "MPI_Type_create_resized");
  check(MPI_Type_commit(&t), "MPI_Type_commit");
  return Datatype(t);
}

// Scatterv/Gatherv arguments at the root for row bands (counts in floats) or equal
// tiles (one resized vector type, displacements at the tile origins).
struct RootV {
  std::vector<int> counts, displs;
  Datatype owned;
  MPI_Datatype type = MPI_FLOAT;
  RootV(const Comm& c, const Partition& p) : counts(std::size_t(c.size)), displs(std::size_t(c.size)) {
    const bool bands = mpi_shape(p) == MpiShape::bands;
    if (!bands) {
      owned = resized_tile_type(p);
      type = owned.get();
    }
    for (int r = 0; r < c.size; ++r) {
      const Box b = p.tile(r);
      counts[std::size_t(r)] = bands ? int(b.area()) : 1;
      displs[std::size_t(r)] = int(offset_in(b, p.width()));
    }
  }
};

// Alltoallw arguments for "root exchanges one tile with every rank".
struct RootOnlyW {
  std::vector<int> root_counts, root_displs, peer_counts, peer_displs;
  std::vector<MPI_Datatype> root_types, peer_types;
  std::vector<Datatype> owned;
  RootOnlyW(const Comm& c, const Partition& p) {
    const std::size_t n = std::size_t(c.size);
    root_counts.assign(n, 0);
    root_displs.assign(n, 0);
    peer_counts.assign(n, 0);
    peer_displs.assign(n, 0);
    root_types.assign(n, MPI_FLOAT);
    peer_types.assign(n, MPI_FLOAT);
    if (c.rank == 0) {
      for (int r = 0; r < c.size; ++r) {
        const Box b = p.tile(r);
        owned.push_back(block_type(b.width, b.height, p.width()));
        root_types[std::size_t(r)] = owned.back().get();
        root_counts[std::size_t(r)] = 1;
        root_displs[std::size_t(r)] = int(offset_in(b, p.width()) * std::ptrdiff_t(sizeof(float)));
      }
    }
    peer_counts[0] = int(p.tile(c.rank).area());
  }
};

Tile scatter_mpi(const Comm& c, const Image& image, const Partition& p, Halo halo) {
  Tile tile(p, c.rank, halo);
  Image mine(tile.box().width, tile.box().height);
  const float* send = c.rank == 0 ? image.data() : nullptr;
  switch (mpi_shape(p)) {
    case MpiShape::bands:
    case MpiShape::uniform: {
      RootV v(c, p);
      check(MPI_Scatterv(send, v.counts.data(), v.displs.data(), v.type, mine.data(),
                         int(mine.view().width) * mine.height(), MPI_FLOAT, 0, c.comm),
            "MPI_Scatterv");
      break;
    }
    case MpiShape::uneven: {
      RootOnlyW w(c, p);
      check(MPI_Alltoallw(send, w.root_counts.data(), w.root_displs.data(), w.root_types.data(), mine.data(),
                          w.peer_counts.data(), w.peer_displs.data(), w.peer_types.data(), c.comm),
            "MPI_Alltoallw");
      break;
    }
  }
  put_own_tile(mine.view(), tile);
  return tile;
}

Tile scatter_bcast(const Comm& c, const Image& image, const Partition& p, Halo halo) {
  Tile tile(p, c.rank, halo);
  const Box& b = tile.box();
  if (c.rank == 0) {
    check(MPI_Bcast(const_cast<float*>(image.data()), int(p.image().area()), MPI_FLOAT, 0, c.comm),
          "MPI_Bcast");
    put_own_tile(image.view().sub(b.x0, b.y0, b.width, b.height), tile);
  } else {
    Image whole(p.width(), p.height());
    check(MPI_Bcast(whole.data(), int(p.image().area()), MPI_FLOAT, 0, c.comm), "MPI_Bcast");
    put_own_tile(whole.view().sub(b.x0, b.y0, b.width, b.height), tile);
  }
  return tile;
}

void gather_oft(const Comm& c, ConstView local, const Partition& p, Image& whole) {
  if (c.rank != 0) {
    Datatype t = block_type(local.width, local.height, local.stride);
    check(MPI_Send(local.data, 1, t.get(), 0, kGatherTag, c.comm), "MPI_Send");
    return;
  }
  copy_block(local, whole.view().sub(0, 0, local.width, local.height));
  for (int r = 1; r < c.size; ++r) {
    const Box b = p.tile(r);
    Datatype t = block_type(b.width, b.height, p.width());
    check(MPI_Recv(whole.data() + offset_in(b, p.width()), 1, t.get(), r, kGatherTag, c.comm,
                   MPI_STATUS_IGNORE),
          "MPI_Recv");
  }
}

void gather_sbt(const Comm& c, ConstView local, const Partition& p, Image& whole) {
  auto children = sbt_children(c.rank, c.size);
  std::reverse(children.begin(), children.end());  // smallest subtree is ready first
  if (c.rank == 0) {
    copy_block(local, whole.view().sub(0, 0, local.width, local.height));
    for (int child : children) {
      Datatype t = subtree_type_in_image(p, child, sbt_subtree_end(child, c.size));
      check(MPI_Recv(whole.data(), 1, t.get(), child, kGatherTag, c.comm, MPI_STATUS_IGNORE), "MPI_Recv");
    }
    return;
  }
  if (children.empty()) {
    // A leaf sends its tile straight from where compute wrote it, as in the flat tree:
    // staging it first would add a copy the cost models do not (and need not) price.
    Datatype t = block_type(local.width, local.height, local.stride);
    check(MPI_Send(local.data, 1, t.get(), sbt_parent(c.rank), kGatherTag, c.comm), "MPI_Send");
    return;
  }
  Staging staging(p, c.rank, sbt_subtree_end(c.rank, c.size));
  copy_block(local, View{staging.chunk(c.rank), local.width, local.height, local.width});
  for (int child : children)
    recv_floats(c, staging.chunk(child), staging.floats(child, sbt_subtree_end(child, c.size)), child,
                kGatherTag);
  send_floats(c, staging.data.get(), staging.size(), sbt_parent(c.rank), kGatherTag);
}

void gather_mpi(const Comm& c, ConstView local, const Partition& p, Image& whole) {
  // MPI's collectives take a contiguous send buffer here.
  Image mine(local.width, local.height);
  copy_block(local, mine.view());
  switch (mpi_shape(p)) {
    case MpiShape::bands:
    case MpiShape::uniform: {
      RootV v(c, p);
      check(MPI_Gatherv(mine.data(), mine.width() * mine.height(), MPI_FLOAT,
                        c.rank == 0 ? whole.data() : nullptr, v.counts.data(), v.displs.data(), v.type, 0,
                        c.comm),
            "MPI_Gatherv");
      break;
    }
    case MpiShape::uneven: {
      RootOnlyW w(c, p);
      // Every rank sends its tile to the root: the transpose of the scatter.
      check(MPI_Alltoallw(mine.data(), w.peer_counts.data(), w.peer_displs.data(), w.peer_types.data(),
                          c.rank == 0 ? whole.data() : nullptr, w.root_counts.data(), w.root_displs.data(),
                          w.root_types.data(), c.comm),
            "MPI_Alltoallw");
      break;
    }
  }
}

// One exchange step's blocks in the tile's haloed buffer.
struct LocalStep {
  float* send_at = nullptr;
  float* recv_at = nullptr;
  Datatype send_type, recv_type;
  int send_to = MPI_PROC_NULL, recv_from = MPI_PROC_NULL;
};

LocalStep local_step(Tile& tile, const ExchangeStep& s) {
  LocalStep l;
  View in = tile.interior();
  const Box& b = tile.box();
  if (s.send_to >= 0) {
    l.send_to = s.send_to;
    l.send_at = &in.at(s.send.x0 - b.x0, s.send.y0 - b.y0);
    l.send_type = block_type(s.send.width, s.send.height, tile.stride());
  }
  if (s.recv_from >= 0) {
    l.recv_from = s.recv_from;
    l.recv_at = &in.at(s.recv.x0 - b.x0, s.recv.y0 - b.y0);
    l.recv_type = block_type(s.recv.width, s.recv.height, tile.stride());
  }
  return l;
}

void mirror(Tile& tile, bool x, bool y) {
  mirror_image_edges(tile.interior(), tile.halo(), tile.box(), tile.partition().width(),
                     tile.partition().height(), x, y);
}

void exchange_four_step(const Comm& c, Tile& tile) {
  auto steps = exchange_steps(tile.partition(), tile.rank(), tile.halo());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    LocalStep l = local_step(tile, steps[i]);
    // Blocking and one full path per step, as in Fig. 7: every rank sends towards
    // the step's direction while receiving from the opposite neighbour.
    check(MPI_Sendrecv(l.send_at, l.send_to == MPI_PROC_NULL ? 0 : 1,
                       l.send_to == MPI_PROC_NULL ? MPI_FLOAT : l.send_type.get(), l.send_to, kExchangeTag,
                       l.recv_at, l.recv_from == MPI_PROC_NULL ? 0 : 1,
                       l.recv_from == MPI_PROC_NULL ? MPI_FLOAT : l.recv_type.get(), l.recv_from,
                       kExchangeTag, c.comm, MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
    if (i == 1) mirror(tile, true, false);  // x-edges before the rows go up and down
  }
  mirror(tile, false, true);
}

void exchange_nonblocking(const Comm& c, Tile& tile) {
  auto steps = exchange_steps(tile.partition(), tile.rank(), tile.halo());
  for (int phase = 0; phase < 2; ++phase) {
    std::vector<LocalStep> locals;
    std::vector<MPI_Request> requests;
    for (int i = 0; i < 2; ++i) locals.push_back(local_step(tile, steps[std::size_t(2 * phase + i)]));
    for (std::size_t i = 0; i < locals.size(); ++i) {
      const LocalStep& l = locals[i];
      if (l.recv_from == MPI_PROC_NULL) continue;
      requests.emplace_back();
      check(MPI_Irecv(l.recv_at, 1, l.recv_type.get(), l.recv_from, kExchangeTag + int(i), c.comm,
                      &requests.back()),
            "MPI_Irecv");
    }
    for (std::size_t i = 0; i < locals.size(); ++i) {
      const LocalStep& l = locals[i];
      if (l.send_to == MPI_PROC_NULL) continue;
      requests.emplace_back();
      check(MPI_Isend(l.send_at, 1, l.send_type.get(), l.send_to, kExchangeTag + int(i), c.comm,
                      &requests.back()),
            "MPI_Isend");
    }
    check(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    mirror(tile, phase == 0, phase == 1);
  }
}

}  // namespace

Tile scatter(const Comm& c, const Image& image, const Partition& p, Halo halo, ScatterAlgorithm algorithm) {
  if (c.size != p.procs())
    throw InfeasiblePlan("scatter over " + std::to_string(c.size) + " ranks with grid " +
                         to_string(p.grid()));
  switch (algorithm) {
    case ScatterAlgorithm::oft:
      return scatter_oft(c, image, p, halo);
    case ScatterAlgorithm::sbt:
      return scatter_sbt(c, image, p, halo);
    case ScatterAlgorithm::mpi:
      return scatter_mpi(c, image, p, halo);
    case ScatterAlgorithm::bcast:
      return scatter_bcast(c, image, p, halo);
  }
  throw InvalidArgument("unknown scatter algorithm");
}

void exchange_borders(const Comm& c, Tile& tile, ExchangeAlgorithm algorithm) {
  switch (algorithm) {
    case ExchangeAlgorithm::four_step:
      return exchange_four_step(c, tile);
    case ExchangeAlgorithm::nonblocking:
      return exchange_nonblocking(c, tile);
  }
}

void gather_into(const Comm& c, ConstView local, const Partition& p, GatherAlgorithm algorithm,
                 Image& whole) {
  if (c.size != p.procs())
    throw InfeasiblePlan("gather over " + std::to_string(c.size) + " ranks with grid " + to_string(p.grid()));
  if (c.rank == 0 && (whole.width() != p.width() || whole.height() != p.height()))
    throw InvalidArgument("gather_into: destination is not image-sized");
  switch (algorithm) {
    case GatherAlgorithm::oft:
      return gather_oft(c, local, p, whole);
    case GatherAlgorithm::sbt:
      return gather_sbt(c, local, p, whole);
    case GatherAlgorithm::mpi:
      return gather_mpi(c, local, p, whole);
  }
}

Image gather(const Comm& c, ConstView local, const Partition& p, GatherAlgorithm algorithm) {
  Image whole;
  if (c.rank == 0) whole = Image(p.width(), p.height());
  gather_into(c, local, p, algorithm, whole);
  return whole;
}

}  // namespace tessera
