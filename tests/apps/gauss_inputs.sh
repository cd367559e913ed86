#!/usr/bin/env bash
# Valid input tessera-gauss must accept: paths with spaces and UTF-8, images not
# larger than the kernel border (1x1, 2x2, strips) on any rank count with the same
# bytes as one rank, and non-finite pixels (with a warning).
#   gauss_inputs.sh BIN_DIR paths|tiny|nonfinite
set -uo pipefail
bin=$1 case=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ -f "$work/stderr" ] && { echo "--- stderr:"; cat "$work/stderr"; }; exit 1; }
gauss() { timeout 120 mpirun -n "$1" --oversubscribe "$bin/tessera-gauss" "${@:2}" >/dev/null 2>"$work/stderr"; }
# A W x H binary PGM with pixel values (7 * i) mod 256.
pgm() {
  { printf 'P5\n%d %d\n255\n' "$2" "$3"
    for ((i = 0; i < $2 * $3; ++i)); do printf "\\$(printf %03o $((7 * i % 256)))"; done; } >"$1"
}
same() { for f in "$1"/*; do cmp -s "$f" "$2/$(basename "$f")" || fail "$3: $(basename "$f") differs"; done; }

paths() {
  # Spaces and UTF-8 in --input and --output.
  dir="$work/in dir ü"
  mkdir -p "$dir"
  pgm "$dir/with space é.pgm" 9 7
  gauss 2 --input "$dir/with space é.pgm" --sigma 1 --output "$work/out dir ∂" || fail "path with spaces/UTF-8"
  [ "$(ls "$work/out dir ∂" | wc -l)" -eq 10 ] || fail "paths: expected 10 files"
  echo "ok: paths with spaces and UTF-8"
}

tiny() {
  # Tiny and strip images: every rank count and the default plans give one rank's bytes.
  for size in 1x1 2x2 1x40 40x1 3x5; do
    w=${size%x*} h=${size#*x}
    pgm "$work/img.pgm" "$w" "$h"
    gauss 1 --input "$work/img.pgm" --sigma 3 --output "$work/ref" || fail "$size on 1 rank"
    [ "$(ls "$work/ref" | wc -l)" -eq 10 ] || fail "$size: expected 10 files"
    for p in 2 3; do
      gauss "$p" --input "$work/img.pgm" --sigma 3 --output "$work/auto" || fail "$size, -n $p, --plan auto"
      same "$work/ref" "$work/auto" "$size -n $p auto"
      gauss "$p" --input "$work/img.pgm" --sigma 3 --output "$work/manual" --plan manual ||
        fail "$size, -n $p, --plan manual (default grid)"
      same "$work/ref" "$work/manual" "$size -n $p manual"
    done
    echo "ok: $size"
  done
  # A strip split along its length: 1 px wide, rows split in two (halo 12 < 20 rows).
  pgm "$work/img.pgm" 1 40
  gauss 1 --input "$work/img.pgm" --sigma 3 --output "$work/ref" || fail "1x40"
  gauss 2 --input "$work/img.pgm" --sigma 3 --output "$work/split" --grid 1x2 || fail "1x40 on grid 1x2"
  same "$work/ref" "$work/split" "1x40 grid 1x2"
  # ...but not across its width: tiles narrower than the border are still refused.
  gauss 2 --input "$work/img.pgm" --sigma 3 --output "$work/bad" --grid 2x1 && fail "1x40 on grid 2x1 accepted"
  grep -q "narrower than the border" "$work/stderr" || fail "1x40 on 2x1: no reason"
  echo "ok: strips split along their length, refused across"
  # --radius 1 on a 1x1 image (a border larger than the image).
  pgm "$work/img.pgm" 1 1
  gauss 2 --input "$work/img.pgm" --radius 1 --output "$work/r1" || fail "--radius 1 on 1x1"
  echo "ok: --radius 1 on 1x1"
}

nonfinite() {
  # A float image with an Inf pixel: warned about, not silently NaN.
  { printf 'Pf\n12 10\n-1.0\n'; for i in $(seq 1 119); do printf '\x00\x00\x80\x3f'; done; printf '\x00\x00\x80\x7f'; } \
    >"$work/inf.pfm"
  gauss 1 --input "$work/inf.pfm" --sigma 1 --output "$work/inf" || fail "float image with Inf"
  grep -q "warning: '.*inf.pfm' has 1 non-finite pixel" "$work/stderr" || fail "no warning about the Inf pixel"
  grep -q "warning: Lx has [0-9]* non-finite values" "$work/stderr" || fail "no warning about non-finite Lx"
  [ "$(grep -c 'OpenCV\|TIFF\|WARN' "$work/stderr")" -eq 0 ] || fail "library noise on stderr"
  echo "ok: non-finite pixels are reported"
}

"$case"
