#!/usr/bin/env bash
# tessera-bench's repeatability against the independent Fig. 8 program, as issue 12
# measures it: three launches of `tessera-bench --quick`, each after one launch of
# tessera-fig8-check, a fourth fig8-check at the end; then scripts/bench-spread.py
# prints the quick run's wall time, each run's within-run quality, the spread of each
# cell across the three launches (median and p90 cell), fig8-check's own spread and the
# agreement of the paper table with fig8-check; and, not judged by issue 12's goal, the
# spread of the library-shaped P-3PC cells, of the local-cost rows and of the compute
# kernels' rows across the launches.
# The three launches write one database (OUT/perfdb.sqlite), as a user's reruns do: a
# launch judges the machine's state by what the earlier ones measured (the quiet latency,
# the state probe's quiet cell); SEED=FILE starts it as a copy of FILE.
#
#   scripts/bench-launches.sh [OUT]     (default OUT: bench-launches)
#
# Environment: BIN (default build/bin next to this script), MPIEXEC (default mpirun),
# EXTRA (more tessera-bench arguments), QUICK=0 (full runs instead of --quick), SEED.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
out=${1:-bench-launches}
bin=${BIN:-$here/../build/bin}
mpiexec=${MPIEXEC:-mpirun}
[ -f "$here/env.sh" ] && source "$here/env.sh"
quick=--quick
[ "${QUICK:-1}" = 0 ] && quick=
rm -rf "$out" && mkdir -p "$out"
db="$out/perfdb.sqlite"
if [ -n "${SEED:-}" ]; then cp "$SEED" "$db"; fi
for i in 1 2 3; do
  "$mpiexec" -n 2 "$bin/tessera-fig8-check" >"$out/fig8_$i.csv" 2>/dev/null
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # $quick and $EXTRA split into arguments
  "$mpiexec" -n 2 "$bin/tessera-bench" $quick ${EXTRA:-} --no-progress --perfdb "$db" \
    >"$out/bench_$i.out" 2>&1 || { tail -5 "$out/bench_$i.out" >&2; echo "bench-launches: launch $i failed" >&2; exit 1; }
  python3 -c "import sys, time; print('%.2f' % (time.time() - float(sys.argv[1])))" "$start" >"$out/wall_$i.txt"
  run=$(sed -n 's/^tessera-bench: run \([0-9]*\) on machine.*/\1/p' "$out/bench_$i.out")
  [ -n "$run" ] || { echo "bench-launches: launch $i printed no run id" >&2; exit 1; }
  "$bin/tessera-perfdb" --perfdb "$db" export --csv --run "$run" >"$out/bench_$i.csv"
  "$bin/tessera-perfdb" --perfdb "$db" export --json --run "$run" >"$out/bench_$i.json"
done
"$mpiexec" -n 2 "$bin/tessera-fig8-check" >"$out/fig8_4.csv" 2>/dev/null
python3 "$here/bench-spread.py" "$out"
