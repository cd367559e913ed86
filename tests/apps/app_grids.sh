#!/usr/bin/env bash
# An image app (tessera-edges, tessera-corners) on P ranks writes files byte-identical
# to one rank's, for every grid shape and algorithm given.
#   app_grids.sh BIN_DIR APP IMAGE "APP ARGS" FILES "P:GRID:SCATTER:GATHER:EXCHANGE ..."
set -euo pipefail
bin=$1 app=$2 image=$3 app_args=$4 files=$5 cases=$6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086
mpirun -n 1 "$bin/$app" --input "$image" $app_args --output "$work/ref" 2>/dev/null
[ "$(ls "$work/ref" | wc -l)" -eq "$files" ] || { echo "reference run wrote $(ls "$work/ref" | wc -l) files, expected $files"; exit 1; }
status=0
for c in $cases; do
  IFS=: read -r p grid scatter gather exchange <<<"$c"
  out="$work/$p-$grid-$scatter-$gather-$exchange"
  # shellcheck disable=SC2086
  timeout 120 mpirun -n "$p" --oversubscribe "$bin/$app" --input "$image" $app_args \
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
