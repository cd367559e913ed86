#pragma once
// Runs an allreduce plan (tessera/comm_plan.hpp, allreduce_plan): the steps the
// scheduler prices, as blocking point-to-point messages. Internal to src/mpi.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <utility>

#include "comm.hpp"
#include "tessera/comm_plan.hpp"

namespace tessera::detail {

/// Folds a received partial into the rank's own (both 8 * words bytes).
using CombineBytes = std::function<void(std::byte* mine, const std::byte* received)>;

/// Runs `plan` (plan.procs() == comm.size) on this rank's `data` (plan.bytes() bytes):
/// on return every rank holds the combination of every rank's data. `combine` is
/// called in the plan's fixed order (the tree's), so with an associative combine the
/// result has the same bits on every rank and for every P. Collective over comm.
void run_allreduce(const Comm& comm, const AllreducePlan& plan, std::byte* data, const CombineBytes& combine);

/// The same on N 8-byte values (int64 limbs, doubles): allreduce_plan(comm.size, N),
/// combine(mine, received) on arrays. Returns the bytes of each message (the plan's).
/// Collective over comm.
template <class T, std::size_t N, class Combine>
int allreduce(const Comm& comm, std::array<T, N>& value, Combine combine) {
  static_assert(sizeof(T) == 8, "the allreduce plan prices 8-byte scalars");
  const AllreducePlan plan = allreduce_plan(comm.size, int(N));
  run_allreduce(comm, plan, reinterpret_cast<std::byte*>(value.data()),
                [&](std::byte*, const std::byte* received) {  // mine is value's storage
                  std::array<T, N> in;
                  std::memcpy(in.data(), received, sizeof in);
                  combine(value, std::as_const(in));
                });
  return int(plan.bytes());
}

}  // namespace tessera::detail
