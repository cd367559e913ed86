#!/usr/bin/env bash
# One launch of an app, as a user runs it (read, plan, run once, write), timed whole:
# --plan auto against a manual plan, interleaved, each launch after PAUSE seconds idle
# (on a VM that hands free memory back to its host a new process then faults in all its
# buffers, as a user's first launch of the day does). Prints each launch's wall time and
# the plan auto chose, then the median [min-max] of each.
#
#   scripts/one-launch.sh APP INPUT "MANUAL PLAN OPTIONS" [N] [-- APP OPTIONS...]
#   e.g. scripts/one-launch.sh edges img.png "--grid 1x2 --scatter oft --gather oft
#        --exchange nonblocking" 3 -- --sigma 2 --perfdb DB
#
# Environment: RANKS (default 2), PAUSE (default 8), BIN (default build/bin next to this
# script), MPIEXEC (default mpirun).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: $0 APP INPUT \"MANUAL PLAN OPTIONS\" [N] [-- APP OPTIONS...]" >&2; }
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  usage
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 0
fi
[ $# -ge 3 ] || { usage; exit 2; }
app=$1 input=$2 manual=$3
shift 3
n=3
if [ $# -gt 0 ] && [ "$1" != "--" ]; then n=$1; shift; fi
[[ $n =~ ^[1-9][0-9]*$ ]] || { usage; exit 2; }
[ "${1:-}" = "--" ] && shift
[ -f "$input" ] || { echo "one-launch: no input image $input" >&2; exit 2; }
bin=${BIN:-$here/../build/bin}
mpiexec=${MPIEXEC:-mpirun}
[ -f "$here/env.sh" ] && source "$here/env.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A walls
for ((k = 1; k <= n; ++k)); do
  for variant in auto manual; do
    sleep "${PAUSE:-8}"
    opts=(--plan auto)
    [ "$variant" = manual ] && read -r -a opts <<<"$manual"
    rm -rf "$out/result"
    t0=$(date +%s.%N)
    "$mpiexec" -n "${RANKS:-2}" "$bin/tessera-$app" --input "$input" --output "$out/result" "${opts[@]}" "$@" \
      2>"$out/err" >/dev/null || { cat "$out/err" >&2; exit 1; }
    t1=$(date +%s.%N)
    wall=$(python3 -c "print('%.1f' % (($t1 - $t0) * 1e3))")
    walls[$variant]="${walls[$variant]:-} $wall"
    plan=$(grep -o 'plan [0-9]*x[0-9]* [^(]*' "$out/err" | head -1 || true)
    echo "launch $k $variant: ${wall} ms ${plan:+($plan)}"
  done
done
for variant in auto manual; do
  python3 -c '
import statistics, sys
v = [float(x) for x in sys.argv[2:]]
print("%s: %.1f [%.1f-%.1f] ms over %d launches" % (sys.argv[1], statistics.median(v), min(v), max(v), len(v)))' \
    "$variant" ${walls[$variant]}
done
