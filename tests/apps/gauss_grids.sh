#!/usr/bin/env bash
# tessera-gauss on P ranks writes files byte-identical to one rank's, for every grid
# shape and algorithm given, on an odd-sized colour photograph.
#   gauss_grids.sh BIN_DIR IMAGE SIGMA "P:GRID:SCATTER:GATHER:EXCHANGE ..."
set -euo pipefail
bin=$1 image=$2 sigma=$3 cases=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpirun -n 1 "$bin/tessera-gauss" --input "$image" --sigma "$sigma" --output "$work/ref" 2>/dev/null
[ "$(ls "$work/ref" | wc -l)" -eq 10 ] || { echo "reference run wrote $(ls "$work/ref" | wc -l) files, expected 10"; exit 1; }
status=0
for c in $cases; do
  IFS=: read -r p grid scatter gather exchange <<<"$c"
  out="$work/$p-$grid-$scatter-$gather-$exchange"
  timeout 120 mpirun -n "$p" --oversubscribe "$bin/tessera-gauss" --input "$image" --sigma "$sigma" \
    --output "$out" --grid "$grid" --scatter "$scatter" --gather "$gather" --exchange "$exchange" 2>/dev/null
  for f in "$work"/ref/*; do
    if ! cmp -s "$f" "$out/$(basename "$f")"; then
      echo "DIFFERS: $c $(basename "$f")"
      status=1
    fi
  done
  echo "identical: -n $p --grid $grid --scatter $scatter --gather $gather --exchange $exchange"
done
exit $status
