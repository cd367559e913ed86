#!/usr/bin/env bash
# A process's first run against its price: for each image size and P, the plan
# tessera-plan chooses with --procs P (its first_run_extra_us: the page faults of the
# buffers the run maps), then N launches of tessera-gauss --bench 3 --warmup 0 with that
# plan, each after PAUSE seconds idle. Prints per launch the first run's extra time
# (first run - warm median), the prediction, and the bytes the root mapped against
# the predicted bytes; then the median [min-max] of the extra per case.
#
#   scripts/first-run.sh --perfdb DB [N]
#
# Environment: SIZES (default "2048 4096"), PROCS (default "1 2"), SIGMA (default 3),
# PAUSE (seconds idle before each launch, default 8: on a VM that hands free memory
# back to its host the first run then meets memory the host must fault in again),
# BIN (default build/bin next to this script), MPIEXEC (default mpirun).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: $0 --perfdb DB [N]   (N >= 1 launches per case, default 3)" >&2; }
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  usage
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 0
fi
if [ "${1:-}" != "--perfdb" ] || [ -z "${2:-}" ]; then
  usage
  exit 2
fi
db=$2
n=${3:-3}
if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
  usage
  exit 2
fi
[ -f "$db" ] || { echo "first-run: no performance database at $db (run tessera-bench first)" >&2; exit 2; }
bin=${BIN:-$here/../build/bin}
mpiexec=${MPIEXEC:-mpirun}
sigma=${SIGMA:-3}
[ -f "$here/env.sh" ] && source "$here/env.sh"

for size in ${SIZES:-2048 4096}; do
  for procs in ${PROCS:-1 2}; do
    plan=$("$bin/tessera-plan" --width "$size" --height "$size" --sigma "$sigma" --procs "$procs" \
      --perfdb "$db" --json 2>/dev/null)
    read -r grid scatter gather exchange predicted mapped < <(python3 -c '
import json, sys
j = json.load(sys.stdin); c = j["chosen"]
print(c["grid"], c["scatter"], c["gather"], c["exchange"], j["first_run_extra_us"], j["first_run_mapped_bytes"])' <<<"$plan")
    extras=()
    for ((k = 1; k <= n; ++k)); do
      sleep "${PAUSE:-8}"
      out=$("$mpiexec" -n "$procs" "$bin/tessera-gauss" --bench 3 --warmup 0 --width "$size" --height "$size" \
        --sigma "$sigma" --grid "$grid" --scatter "$scatter" --gather "$gather" --exchange "$exchange" 2>/dev/null |
        tail -1)
      line=$(python3 -c '
import json, sys
j = json.loads(sys.argv[1]); first = j["first_run_s"]["total"]; warm = j["median_s"]
print("%.1f" % ((first - warm) * 1e3), "%.1f" % (warm * 1e3), "%.1f" % (j["first_run_mapped_bytes"][0] / 2**20))' "$out")
      read -r extra warm root <<<"$line"
      extras+=("$extra")
      printf '%s² σ %s P %s %s %s/%s/%s launch %d: warm %s ms, first run +%s ms (predicted +%.1f); root mapped %s MiB (predicted %.1f)\n' \
        "$size" "$sigma" "$procs" "$grid" "$scatter" "$gather" "$exchange" "$k" "$warm" "$extra" \
        "$(python3 -c "print($predicted / 1e3)")" "$root" "$(python3 -c "print($mapped / 2**20)")"
    done
    python3 -c '
import statistics, sys
v = [float(x) for x in sys.argv[3:]]
print("%s: first run +%.1f [%.1f-%.1f] ms over %d launches, predicted +%.1f ms"
      % (sys.argv[1], statistics.median(v), min(v), max(v), len(v), float(sys.argv[2]) / 1e3))' \
      "${size}² σ ${sigma} P ${procs}" "$predicted" "${extras[@]}"
  done
done
