// The executor: runs a communication plan (comm_plan.hpp) with MPI. Every message,
// copy and mirror it performs is a step of the plan the scheduler prices; nothing here
// decides who sends what.
#include "tessera/distributed.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "comm.hpp"
#include "tessera/error.hpp"
#include "tessera/gaussian.hpp"
#include "tessera/tree.hpp"

namespace tessera {

using detail::check;
using detail::Comm;
using detail::Datatype;

Tile::Tile(const Partition& partition, int rank, Halo halo)
    : partition_(partition),
      rank_(rank),
      box_(partition.tile(rank)),
      halo_(halo),
      buffer_(box_.width + 2 * halo.x, box_.height + 2 * halo.y) {}

namespace detail {

// One step of this rank's program, with its datatype built once.
struct PreparedStep {
  CommStep step;
  Datatype type;              // send/recv: the message in its store
  std::ptrdiff_t offset = 0;  // float offset of the message's first box in its store
};

struct Prepared {
  CommPlan plan;
  int rank = 0;
  int tag_base = 0;
  std::vector<PreparedStep> steps;
  std::vector<MPI_Request> requests;  // posted, not yet waited for
  StepSeconds* record = nullptr;      // step times, when traced
};

}  // namespace detail

namespace {

using detail::Prepared;
using detail::PreparedStep;

constexpr int kScatterTag = 101;
constexpr int kGatherTag = 102;
constexpr int kExchangeTag = 110;

// Float offset of global box `b` in `store` of `rank`.
std::ptrdiff_t offset_in(Store store, const Box& b, const Partition& p, int rank, Halo halo) {
  if (store == Store::staging) {
    // Whole tiles back to back from the rank's own: find the tile that starts at b.
    for (int r = rank; r < p.procs(); ++r)
      if (p.tile(r) == b) return std::ptrdiff_t(p.area_before(r) - p.area_before(rank));
    throw Error("plan: a staged box is not a tile");
  }
  const StoreGeometry g = store_geometry(store, p, rank, halo);
  return std::ptrdiff_t(b.y0 - g.y0) * g.stride + (b.x0 - g.x0);
}

// The message's datatype, relative to its first box: contiguous exactly when the plan
// priced it so (store_contiguous), else a vector (one box) or a struct of vectors.
Datatype message_type(const CommStep& s, const Partition& p, int rank, Halo halo, std::ptrdiff_t* offset) {
  const auto boxes = boxes_of(s, p);
  *offset = offset_in(s.store, boxes.front(), p, rank, halo);
  MPI_Datatype t;
  if (store_contiguous(s.store, boxes, p, rank, halo)) {
    check(MPI_Type_contiguous(int(floats_of(s, p)), MPI_FLOAT, &t), "MPI_Type_contiguous");
    check(MPI_Type_commit(&t), "MPI_Type_commit");
    return Datatype(t);
  }
  const std::ptrdiff_t stride = store_geometry(s.store, p, rank, halo).stride;
  if (boxes.size() == 1) return detail::block_type(boxes[0].width, boxes[0].height, stride);
  std::vector<std::ptrdiff_t> offsets;
  for (const Box& b : boxes) offsets.push_back(offset_in(s.store, b, p, rank, halo) - *offset);
  return detail::blocks_type(boxes, offsets, stride);
}

std::unique_ptr<Prepared> prepare(CommPlan plan, int rank, int tag_base) {
  auto prepared = std::make_unique<Prepared>();
  prepared->plan = std::move(plan);
  prepared->rank = rank;
  prepared->tag_base = tag_base;
  const CommPlan& pl = prepared->plan;
  for (const CommStep& s : pl.ranks[std::size_t(rank)]) {
    PreparedStep ps{s, {}, 0};
    if (s.kind == StepKind::send || s.kind == StepKind::recv)
      ps.type = message_type(s, pl.partition, rank, pl.halo, &ps.offset);
    prepared->steps.push_back(std::move(ps));
  }
  return prepared;
}

// The buffers a run reads and writes; staging, received and whole are allocated on
// first use (their size is known only from the rank's place in the plan).
struct Buffers {
  float* image = nullptr;  // the root's whole image
  float* tile = nullptr;   // the haloed tile buffer
  const float* output = nullptr;
  std::ptrdiff_t output_stride = 0;
  Tile* haloed = nullptr;  // for mirroring
  detail::FloatBuffer staging, received, whole;

  float* base(Store store, const Prepared& p) {
    const Partition& part = p.plan.partition;
    auto ensure = [](detail::FloatBuffer& b, std::size_t n) {
      if (!b) b = detail::allocate_floats(n);
      return b.get();
    };
    switch (store) {
      case Store::image:
        return image;
      case Store::tile:
        return tile;
      case Store::output:
        return const_cast<float*>(output);
      case Store::staging:
        return ensure(staging, scratch_floats(store, part, p.rank));
      case Store::received:
        return ensure(received, scratch_floats(store, part, p.rank));
      case Store::whole:
        return ensure(whole, scratch_floats(store, part, p.rank));
    }
    return nullptr;
  }
};

std::ptrdiff_t stride_of(Store store, const Prepared& p, const Buffers& b) {
  if (store == Store::output) return b.output_stride;
  if (store == Store::staging) return p.plan.partition.tile(p.rank).width;  // own chunk only
  return store_geometry(store, p.plan.partition, p.rank, p.plan.halo).stride;
}

void copy_step(const CommStep& s, const Prepared& p, Buffers& b) {
  if (s.inside_mpi) return;  // MPI's collective does this copy
  const Partition& part = p.plan.partition;
  const int r = p.rank;
  const std::ptrdiff_t from_stride = stride_of(s.from, p, b), to_stride = stride_of(s.store, p, b);
  auto at = [&](Store store, std::ptrdiff_t stride) {
    const StoreGeometry g = store_geometry(store, part, r, p.plan.halo);
    const std::ptrdiff_t off = store == Store::staging ? offset_in(store, s.box, part, r, p.plan.halo)
                                                       : std::ptrdiff_t(s.box.y0 - g.y0) * stride + (s.box.x0 - g.x0);
    return b.base(store, p) + off;
  };
  const float* from = at(s.from, from_stride);
  float* to = at(s.store, to_stride);
  if (from == to && from_stride == to_stride) return;  // already in place
  for (int y = 0; y < s.box.height; ++y)
    std::copy_n(from + std::ptrdiff_t(y) * from_stride, s.box.width, to + std::ptrdiff_t(y) * to_stride);
}

// MPI_Scatterv/Gatherv take one datatype for every rank, so they serve when tiles are
// row bands (contiguous, counts vary) or all the same shape (one vector type resized to
// a float, displacements at the tile origins); for uneven 2-D tiles MPI_Alltoallw, the
// collective with per-rank datatypes, does it.
enum class MpiShape { bands, uniform, uneven };

MpiShape mpi_shape(const Partition& p) {
  if (p.grid().x == 1) return MpiShape::bands;
  if (p.width() % p.grid().x == 0 && p.height() % p.grid().y == 0) return MpiShape::uniform;
  return MpiShape::uneven;
}

std::ptrdiff_t origin_in_image(const Box& b, int image_width) { return std::ptrdiff_t(b.y0) * image_width + b.x0; }

// Scatterv/Gatherv arguments at the root: counts in floats (bands) or one resized
// vector type per tile (uniform).
struct RootV {
  std::vector<int> counts, displs;
  Datatype owned;
  MPI_Datatype type = MPI_FLOAT;
  RootV(const Comm& c, const Partition& p) : counts(std::size_t(c.size)), displs(std::size_t(c.size)) {
    const bool bands = mpi_shape(p) == MpiShape::bands;
    if (!bands) {
      const Box b = p.tile(0);
      Datatype block = detail::block_type(b.width, b.height, p.width());
      MPI_Datatype t;
      check(MPI_Type_create_resized(block.get(), 0, sizeof(float), &t), "MPI_Type_create_resized");
      check(MPI_Type_commit(&t), "MPI_Type_commit");
      owned = Datatype(t);
      type = owned.get();
    }
    for (int r = 0; r < c.size; ++r) {
      const Box b = p.tile(r);
      counts[std::size_t(r)] = bands ? int(b.area()) : 1;
      displs[std::size_t(r)] = int(origin_in_image(b, p.width()));
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
        owned.push_back(detail::block_type(b.width, b.height, p.width()));
        root_types[std::size_t(r)] = owned.back().get();
        root_counts[std::size_t(r)] = 1;
        root_displs[std::size_t(r)] = int(origin_in_image(b, p.width()) * std::ptrdiff_t(sizeof(float)));
      }
    }
    peer_counts[0] = int(p.tile(c.rank).area());
  }
};

void collective_step(const Comm& c, const Prepared& p, Buffers& b) {
  const Partition& part = p.plan.partition;
  float* mine = b.base(Store::received, p);
  const int n = int(part.tile(c.rank).area());
  float* image = c.rank == 0 ? b.image : nullptr;
  const bool scatter = p.plan.phase == CommPhase::scatter;
  if (mpi_shape(part) != MpiShape::uneven) {
    RootV v(c, part);
    if (scatter)
      check(MPI_Scatterv(image, v.counts.data(), v.displs.data(), v.type, mine, n, MPI_FLOAT, 0, c.comm),
            "MPI_Scatterv");
    else
      check(MPI_Gatherv(mine, n, MPI_FLOAT, image, v.counts.data(), v.displs.data(), v.type, 0, c.comm),
            "MPI_Gatherv");
    return;
  }
  RootOnlyW w(c, part);
  // The gather is the transpose of the scatter: every rank sends its tile to the root.
  if (scatter)
    check(MPI_Alltoallw(image, w.root_counts.data(), w.root_displs.data(), w.root_types.data(), mine,
                        w.peer_counts.data(), w.peer_displs.data(), w.peer_types.data(), c.comm),
          "MPI_Alltoallw");
  else
    check(MPI_Alltoallw(mine, w.peer_counts.data(), w.peer_displs.data(), w.peer_types.data(), image,
                        w.root_counts.data(), w.root_displs.data(), w.root_types.data(), c.comm),
          "MPI_Alltoallw");
}

// A step as StepSeconds names it: its kind (to_string), then what it moves.
std::string step_name(const CommStep& s, const Partition& part) {
  std::string name(to_string(s.kind));
  const std::string bytes = " " + std::to_string(floats_of(s, part) * sizeof(float)) + " B";
  const std::string posted = s.posted ? " (posted)" : "";
  if (s.kind == StepKind::send) name += bytes + " to " + std::to_string(s.peer) + posted;
  if (s.kind == StepKind::recv) name += bytes + " from " + std::to_string(s.peer) + posted;
  if (s.kind == StepKind::copy) name += bytes;
  if (s.kind == StepKind::mirror) name += s.axis == 0 ? " x" : " y";
  return name;
}

void trace_into(Prepared& p, StepSeconds* record) {
  if (record) {
    std::vector<std::string> names;
    for (const PreparedStep& ps : p.steps) names.push_back(step_name(ps.step, p.plan.partition));
    if (record->steps.empty() && record->runs.empty())
      record->steps = std::move(names);
    else if (record->steps != names)
      throw InvalidArgument("step times: this record holds another plan's steps (one record per plan)");
  }
  p.record = record;
}

// A new run of a traced plan: its steps' times go to a new row.
void start_run(Prepared& p) {
  if (p.record) p.record->runs.emplace_back();
}

// Runs steps [from, to) of this rank's program; returns the index it stopped at.
std::size_t run_steps(const Comm& c, Prepared& p, Buffers& b, std::size_t from, std::size_t to) {
  // A run's first call opened its row (start_run).
  std::vector<double>* times = p.record && !p.record->runs.empty() ? &p.record->runs.back() : nullptr;
  std::size_t i = from;
  for (; i < to; ++i) {
    const double started = times ? MPI_Wtime() : 0.0;
    PreparedStep& ps = p.steps[i];
    const CommStep& s = ps.step;
    const int tag = p.tag_base + s.tag;
    switch (s.kind) {
      case StepKind::send: {
        float* at = b.base(s.store, p) + ps.offset;
        if (s.posted) {
          p.requests.emplace_back();
          check(MPI_Isend(at, 1, ps.type.get(), s.peer, tag, c.comm, &p.requests.back()), "MPI_Isend");
        } else {
          check(MPI_Send(at, 1, ps.type.get(), s.peer, tag, c.comm), "MPI_Send");
        }
        break;
      }
      case StepKind::recv: {
        float* at = b.base(s.store, p) + ps.offset;
        if (s.posted) {
          p.requests.emplace_back();
          check(MPI_Irecv(at, 1, ps.type.get(), s.peer, tag, c.comm, &p.requests.back()), "MPI_Irecv");
        } else {
          check(MPI_Recv(at, 1, ps.type.get(), s.peer, tag, c.comm, MPI_STATUS_IGNORE), "MPI_Recv");
        }
        break;
      }
      case StepKind::wait:
        check(MPI_Waitall(int(p.requests.size()), p.requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
        p.requests.clear();
        break;
      case StepKind::copy:
        copy_step(s, p, b);
        break;
      case StepKind::mirror: {
        Tile& t = *b.haloed;
        mirror_image_edges(t.interior(), t.halo(), t.box(), t.partition().width(), t.partition().height(),
                           s.axis == 0, s.axis == 1);
        break;
      }
      case StepKind::collective:
        collective_step(c, p, b);
        break;
    }
    if (times) times->push_back(MPI_Wtime() - started);
  }
  return i;
}

void require_team(const Team& team, const Partition& p, const char* what) {
  if (!team.active() || team.size() != p.procs())
    throw InfeasiblePlan(std::string(what) + " over " + std::to_string(team.size()) + " ranks with grid " +
                         to_string(p.grid()));
}

}  // namespace

Scatter::Scatter(const Team& team, const Partition& partition, Halo halo, ScatterAlgorithm algorithm)
    : team_(&team) {
  require_team(team, partition, "scatter");
  prepared_ = prepare(scatter_plan(algorithm, partition, halo), team.rank(), kScatterTag);
}
Scatter::~Scatter() = default;
Scatter::Scatter(Scatter&&) noexcept = default;
const CommPlan& Scatter::plan() const { return prepared_->plan; }
void Scatter::time_steps(StepSeconds* record) { trace_into(*prepared_, record); }

Tile Scatter::run(const Image& image) const {
  const CommPlan& plan = prepared_->plan;
  Tile tile(plan.partition, team_->rank(), plan.halo);
  Buffers b;
  b.image = const_cast<float*>(image.data());  // read only: the root's scatter sends from it
  b.tile = tile.data();
  start_run(*prepared_);
  run_steps(team_->comm(), *prepared_, b, 0, prepared_->steps.size());
  return tile;
}

BorderExchange::BorderExchange(const Team& team, const Partition& partition, Halo halo,
                               ExchangeAlgorithm algorithm)
    : team_(&team) {
  require_team(team, partition, "exchange");
  prepared_ = prepare(exchange_plan(algorithm, partition, halo), team.rank(), kExchangeTag);
}
BorderExchange::~BorderExchange() = default;
BorderExchange::BorderExchange(BorderExchange&&) noexcept = default;
const CommPlan& BorderExchange::plan() const { return prepared_->plan; }
void BorderExchange::time_steps(StepSeconds* record) { trace_into(*prepared_, record); }

void BorderExchange::begin(Tile& tile) {
  const CommPlan& plan = prepared_->plan;
  if (!(tile.partition().grid() == plan.partition.grid()) || tile.partition().width() != plan.partition.width() ||
      tile.partition().height() != plan.partition.height() || !(tile.halo() == plan.halo) ||
      tile.rank() != prepared_->rank)
    throw InvalidArgument("exchange: the tile is not this rank's tile of the exchange's partition and halo");
  tile_ = &tile;
  Buffers b;
  b.tile = tile.data();
  b.haloed = &tile;
  const auto& steps = prepared_->steps;
  std::size_t first_wait = 0;
  while (first_wait < steps.size() && steps[first_wait].step.kind != StepKind::wait) ++first_wait;
  start_run(*prepared_);
  next_ = run_steps(team_->comm(), *prepared_, b, 0, first_wait);
}

void BorderExchange::end() {
  if (!tile_) throw InvalidArgument("exchange: end() without begin()");
  Buffers b;
  b.tile = tile_->data();
  b.haloed = tile_;
  run_steps(team_->comm(), *prepared_, b, next_, prepared_->steps.size());
  next_ = 0;
  tile_ = nullptr;
}

Gather::Gather(const Team& team, const Partition& partition, GatherAlgorithm algorithm, GatherSource source)
    : team_(&team) {
  require_team(team, partition, "gather");
  prepared_ = prepare(gather_plan(algorithm, partition, source), team.rank(), kGatherTag);
  source_ = source;
}
Gather::~Gather() = default;
Gather::Gather(Gather&&) noexcept = default;
const CommPlan& Gather::plan() const { return prepared_->plan; }
const GatherSource& Gather::source() const { return source_; }
void Gather::time_steps(StepSeconds* record) { trace_into(*prepared_, record); }

void Gather::run(ConstView local, Image& whole) const {
  const Partition& p = prepared_->plan.partition;
  const int rank = team_->rank();
  const Box t = p.tile(rank);
  if (local.width != t.width || local.height != t.height)
    throw InvalidArgument("gather: local image is " + std::to_string(local.width) + "x" +
                          std::to_string(local.height) + ", not the tile's " + std::to_string(t.width) + "x" +
                          std::to_string(t.height));
  if (rank == 0 && (whole.width() != p.width() || whole.height() != p.height()))
    throw InvalidArgument("gather: destination is not image-sized");
  // The plan's steps are all that runs: the result must sit where its source says.
  if (rank == 0) {
    const View in_image = whole.view().sub(t.x0, t.y0, t.width, t.height);
    if (source_.root_in_place && (local.data != in_image.data || local.stride != in_image.stride))
      throw InvalidArgument("gather: the plan takes the root's result in place in the image, and it is not");
  } else if (local.height > 1 && local.stride != std::ptrdiff_t(t.width) + 2 * source_.halo.x) {
    throw InvalidArgument("gather: the result's rows are " + std::to_string(local.stride) +
                          " floats apart, the plan's " + std::to_string(t.width + 2 * source_.halo.x) +
                          " (its source halo " + std::to_string(source_.halo.x) + ")");
  }
  Buffers b;
  b.image = rank == 0 ? whole.data() : nullptr;
  b.output = local.data;
  b.output_stride = local.stride;
  start_run(*prepared_);
  run_steps(team_->comm(), *prepared_, b, 0, prepared_->steps.size());
}

namespace {
// The source a one-shot gather of `local` runs with: the halo its rows' spacing implies
// (a tile's interior), the root in place only if `local` is its tile of `whole`.
// Rows spaced otherwise (an odd gap) are packed into a buffer of their own first.
GatherSource source_of(ConstView& local, const Image& whole, const Partition& p, int rank, Image& packed) {
  const Box t = p.tile(rank);
  GatherSource source;
  if (rank == 0) {
    const ConstView in_image = whole.view().sub(t.x0, t.y0, t.width, t.height);
    source.root_in_place = local.data == in_image.data && local.stride == in_image.stride;
    return source;
  }
  const std::ptrdiff_t gap = local.stride - t.width;
  if (local.height > 1 && (gap < 0 || gap % 2 != 0)) {
    packed = Image(local.width, local.height);
    for (int y = 0; y < local.height; ++y) std::copy_n(local.row(y), local.width, packed.view().row(y));
    local = packed.view();
  } else if (local.height > 1) {
    source.halo = Halo{int(gap / 2), 0};
  }
  return source;
}
}  // namespace

Tile scatter(const Team& team, const Image& image, const Partition& partition, Halo halo,
             ScatterAlgorithm algorithm) {
  return Scatter(team, partition, halo, algorithm).run(image);
}

void exchange_borders(const Team& team, Tile& tile, ExchangeAlgorithm algorithm) {
  BorderExchange(team, tile.partition(), tile.halo(), algorithm).run(tile);
}

void gather_into(const Team& team, ConstView local, const Partition& partition, GatherAlgorithm algorithm,
                 Image& whole) {
  require_team(team, partition, "gather");
  if (team.rank() == 0 && (whole.width() != partition.width() || whole.height() != partition.height()))
    throw InvalidArgument("gather: destination is not image-sized");
  Image packed;
  const GatherSource source = source_of(local, whole, partition, team.rank(), packed);
  Gather(team, partition, algorithm, source).run(local, whole);
}

Image gather(const Team& team, ConstView local, const Partition& partition, GatherAlgorithm algorithm) {
  Image whole;
  if (team.rank() == 0) whole = Image(partition.width(), partition.height());
  gather_into(team, local, partition, algorithm, whole);
  return whole;
}

}  // namespace tessera
