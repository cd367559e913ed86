#!/usr/bin/env bash
# Builds the independent probes (README.md here) into DIR (default build/probes next to
# the repository's root), with the system's mpicxx, g++ and OpenCV, as CI's setup
# installs them. They use no tessera code on purpose.
#   scripts/probes/build.sh [DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../build/probes}
mkdir -p "$out"
flags=(-O2 -std=c++20 -Wall -Wextra)
g++ "${flags[@]}" -pthread "$here/memory_loop.cpp" -o "$out/memory_loop"
g++ "${flags[@]}" "$here/quota_burst.cpp" -o "$out/quota_burst"
g++ "${flags[@]}" "$here/copy_chain.cpp" -o "$out/copy_chain"
g++ "${flags[@]}" "$here/idle_decay.cpp" -o "$out/idle_decay"
g++ "${flags[@]}" -pthread "$here/threads_drift.cpp" -o "$out/threads_drift"
g++ "${flags[@]}" -pthread "$here/quota_threads.cpp" -o "$out/quota_threads"
# C++17: OpenCV 4.6's headers warn under C++20 (enum arithmetic).
for p in opencv_blur derivs_size; do
  # shellcheck disable=SC2046  # pkg-config's words are separate arguments
  g++ -O2 -std=c++17 -Wall -Wextra "$here/$p.cpp" -o "$out/$p" $(pkg-config --cflags --libs opencv4)
done
# The C API only: Open MPI's C++ bindings warn under -Wextra.
mpi=(-DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1)
for p in l3w gather2x1 pingpong state_pair nc_states recv_state layout_order exchange_state quota_gather quota_exchange \
  quota_wait quota_message quota_steps run_collectives idle_poll; do
  mpicxx "${flags[@]}" "${mpi[@]}" "$here/$p.cpp" -o "$out/$p"
done
mpicxx "${flags[@]}" "${mpi[@]}" -pthread "$here/quota_after_compute.cpp" -o "$out/quota_after_compute"
# shellcheck disable=SC2046
mpicxx -O2 -std=c++17 -Wall -Wextra "${mpi[@]}" "$here/ranks_compute.cpp" -o "$out/ranks_compute" \
  $(pkg-config --cflags --libs opencv4)
echo "probes built in $out"
