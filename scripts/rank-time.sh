#!/usr/bin/env bash
# Runs one MPI rank under GNU time and writes "elapsed_s peak_rss_KiB" to PREFIX.RANK,
# so scripts see every rank's peak RSS:  mpirun -n 2 scripts/rank-time.sh PREFIX prog args…
prefix=$1
shift
exec /usr/bin/time -f "%e %M" -o "$prefix.${OMPI_COMM_WORLD_RANK:-0}" "$@"
