#pragma once
// Busy CPU time for the MPI probes: spinning on MPI_Wtime, touching no memory (a rank
// computing, as the quota and barrier probes need). No tessera code, as the probes themselves.
#include <mpi.h>

namespace probe {

inline void spin_us(double us) {
  const double end = MPI_Wtime() + us * 1e-6;
  while (MPI_Wtime() < end) {
  }
}

}  // namespace probe
