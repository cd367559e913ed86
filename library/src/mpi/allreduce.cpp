// The allreduce executor: runs allreduce_plan's steps as blocking sends and receives.
#include "allreduce.hpp"

#include <cassert>
#include <vector>

namespace tessera::detail {

namespace {
constexpr int kReduceTag = 200;  // + ReduceStep::tag (0 reduce half, 1 broadcast half)
}  // namespace

void run_allreduce(const Comm& comm, const AllreducePlan& plan, std::byte* data, const CombineBytes& combine) {
  assert(plan.procs() == comm.size);
  const int bytes = int(plan.bytes());
  std::vector<std::byte> received(static_cast<std::size_t>(bytes));
  for (const ReduceStep& st : plan.ranks[std::size_t(comm.rank)]) {
    switch (st.kind) {
      case ReduceStep::Kind::send:
        check(MPI_Send(data, bytes, MPI_BYTE, st.peer, kReduceTag + st.tag, comm.comm), "MPI_Send");
        break;
      case ReduceStep::Kind::recv:
        // The reduce half receives a partial to combine; the broadcast half the result.
        check(MPI_Recv(st.tag == 0 ? received.data() : data, bytes, MPI_BYTE, st.peer, kReduceTag + st.tag,
                       comm.comm, MPI_STATUS_IGNORE),
              "MPI_Recv");
        break;
      case ReduceStep::Kind::combine:
        combine(data, received.data());
        break;
    }
  }
}

}  // namespace tessera::detail
