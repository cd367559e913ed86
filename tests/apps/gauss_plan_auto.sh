#!/usr/bin/env bash
# tessera-gauss --plan auto (the default): with no perfdb entry it says it uses the
# bundled default, prints the plan it runs, and writes files byte-identical to a
# manual one-rank run.
#   gauss_plan_auto.sh BIN_DIR IMAGE RANKS
set -euo pipefail
bin=$1 image=$2 ranks=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# No database named and none at the default path: the only case the bundled table serves.
unset TESSERA_PERFDB
export XDG_DATA_HOME="$work/xdg"
mpirun -n 1 "$bin/tessera-gauss" --plan manual --input "$image" --sigma 2 --output "$work/ref" 2>/dev/null
timeout 120 mpirun -n "$ranks" --oversubscribe "$bin/tessera-gauss" --input "$image" --sigma 2 --output "$work/auto" 2>"$work/stderr"
grep -q "using bundled default" "$work/stderr" || { echo "no note about the bundled default:"; cat "$work/stderr"; exit 1; }
grep -q "running .* on [0-9]* of $ranks ranks" "$work/stderr" || { echo "plan not printed:"; cat "$work/stderr"; exit 1; }
for f in "$work"/ref/*; do cmp "$f" "$work/auto/$(basename "$f")"; done
grep "running" "$work/stderr"
