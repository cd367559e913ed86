#include "tessera/session.hpp"

#include <string>

#include "comm.hpp"
#include "tessera/error.hpp"

namespace tessera {

Session::Session(int& argc, char**& argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // Threads (TBB) compute inside a rank, but only the main thread calls MPI.
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    owns_mpi_ = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  comm_ = std::make_unique<detail::Comm>(MPI_COMM_WORLD);
}

Session::~Session() {
  comm_.reset();
  if (owns_mpi_) MPI_Finalize();
}

int Session::rank() const { return comm_->rank; }
int Session::size() const { return comm_->size; }

void Session::barrier() const { detail::check(MPI_Barrier(comm_->comm), "MPI_Barrier"); }

void Session::agree(const std::function<void()>& step) const {
  std::string message;
  bool failed = false;
  // The kind travels with the message so every rank rethrows the same type.
  int kind = 0;
  try {
    step();
  } catch (const InvalidArgument& e) {
    failed = true, kind = 1, message = e.what();
  } catch (const InfeasiblePlan& e) {
    failed = true, kind = 2, message = e.what();
  } catch (const IoError& e) {
    failed = true, kind = 3, message = e.what();
  } catch (const std::exception& e) {
    failed = true, message = e.what();
  }
  const int mine = failed ? comm_->rank : comm_->size;
  int first_failed = comm_->size;
  detail::check(MPI_Allreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm_->comm), "MPI_Allreduce");
  if (first_failed == comm_->size) return;
  int header[2] = {int(message.size()), kind};
  detail::check(MPI_Bcast(header, 2, MPI_INT, first_failed, comm_->comm), "MPI_Bcast");
  message.resize(std::size_t(header[0]));
  detail::check(MPI_Bcast(message.data(), header[0], MPI_CHAR, first_failed, comm_->comm), "MPI_Bcast");
  switch (header[1]) {
    case 1: throw InvalidArgument(message);
    case 2: throw InfeasiblePlan(message);
    case 3: throw IoError(message);
    default: throw Error(message);
  }
}

}  // namespace tessera
