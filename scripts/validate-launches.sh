#!/usr/bin/env bash
# Runs tessera-validate N times, each a separate launch (its own mpirun), keeps each
# launch's summary JSON and output directory, then prints the spread of every model's
# and baseline's figures over the launches (scripts/validate-spread.py).
#
#   scripts/validate-launches.sh N [tessera-validate args...]
#   e.g. scripts/validate-launches.sh 3 --quick
#
# Environment: RANKS (ranks per launch, default 2), OUT (directory for launch-K.json,
# launch-K/ and launch-K.err, default validate-launches), BIN (default build/bin next
# to this script), MPIEXEC (default mpirun). Each launch is stored in the perfdb as
# usual unless --no-perfdb-record is among the arguments.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 N [tessera-validate args...]   (N >= 1 launches)" >&2
  exit 2
fi
n=$1
shift
ranks=${RANKS:-2}
out=${OUT:-validate-launches}
bin=${BIN:-$here/../build/bin}
mpiexec=${MPIEXEC:-mpirun}
[ -f "$here/env.sh" ] && source "$here/env.sh"
mkdir -p "$out"
files=()
for ((k = 1; k <= n; ++k)); do
  echo "validate-launches: launch $k/$n: $mpiexec -n $ranks tessera-validate --json $*" >&2
  rm -f "$out/launch-$k.json"
  if ! "$mpiexec" -n "$ranks" "$bin/tessera-validate" --json --output "$out/launch-$k" "$@" \
      >"$out/launch-$k.json.tmp" 2>"$out/launch-$k.err"; then
    echo "validate-launches: launch $k failed; its stderr:" >&2
    tail -20 "$out/launch-$k.err" >&2
    exit 1
  fi
  mv "$out/launch-$k.json.tmp" "$out/launch-$k.json"
  files+=("$out/launch-$k.json")
done
python3 "$here/validate-spread.py" "${files[@]}"
