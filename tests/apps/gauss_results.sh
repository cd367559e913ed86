#!/usr/bin/env bash
# tessera-gauss replaces its output directory as a whole or not at all: a run that
# fails half-way (disk full) leaves the previous result set byte for byte, says why,
# and leaves no temporaries; a directory holding other files is never replaced.
# Needs root (mounts a small tmpfs to fill up).
#   gauss_results.sh BIN_DIR BIG_IMAGE
set -uo pipefail
bin=$1 big=$2
work=$(mktemp -d)
mnt="$work/disk"
mkdir -p "$mnt"
trap 'umount "$mnt" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ -f "$work/stderr" ] && { echo "--- stderr:"; cat "$work/stderr"; }; exit 1; }
mount -t tmpfs -o size=1m tmpfs "$mnt" || fail "cannot mount a tmpfs (this test needs root)"
gauss() { timeout 120 mpirun -n "$1" --oversubscribe "$bin/tessera-gauss" "${@:2}" >/dev/null 2>"$work/stderr"; }
# A 16x16 grey ramp as binary PGM: its ten result files fit in 1 MiB.
{ printf 'P5\n16 16\n255\n'; for i in $(seq 0 255); do printf "\\$(printf %03o "$i")"; done; } >"$work/small.pgm"

gauss 1 --input "$work/small.pgm" --sigma 1 --output "$mnt/o_old" || fail "first run failed"
[ "$(ls "$mnt/o_old" | wc -l)" -eq 10 ] || fail "first run wrote $(ls "$mnt/o_old" | wc -l) files"
cp -a "$mnt/o_old" "$work/before"

# The photograph's five float TIFFs need 2.7 MB: the disk fills up mid-set.
gauss 2 --input "$big" --sigma 2 --output "$mnt/o_old" && fail "a run on a full disk exited 0"
grep -q "No space left on device" "$work/stderr" || fail "the error does not say the disk is full"
grep -q "Success" "$work/stderr" && fail "the error says 'Success'"
diff -r "$work/before" "$mnt/o_old" >/dev/null || fail "the previous result set was changed: $(ls -A "$mnt/o_old")"
[ "$(ls -A "$mnt")" = "o_old" ] || fail "temporaries left behind: $(ls -A "$mnt")"
echo "ok: disk full keeps the previous set ($(grep '^tessera-gauss: error:' "$work/stderr"))"

# A later successful run replaces the whole set, and the manifest says which run.
grep -q '"tessera-gauss"' "$mnt/o_old/.tessera-manifest.json" || fail "no manifest naming the program"
gauss 1 --input "$work/small.pgm" --sigma 2 --output "$mnt/o_old" || fail "second run failed"
grep -q '"2"' "$mnt/o_old/.tessera-manifest.json" || fail "manifest does not name --sigma 2"
cmp -s "$work/before/Lx.tiff" "$mnt/o_old/Lx.tiff" && fail "Lx.tiff was not replaced"
echo "ok: a successful run replaces the set"

# A directory with the user's own files is not a result set: refused, untouched.
mkdir "$work/mine" && echo precious >"$work/mine/notes.txt"
gauss 2 --input "$work/small.pgm" --output "$work/mine" && fail "replaced a directory of user files"
grep -q "not a tessera result set" "$work/stderr" || fail "no reason given for refusing the directory"
[ "$(ls -A "$work/mine")" = "notes.txt" ] && [ "$(cat "$work/mine/notes.txt")" = precious ] ||
  fail "the user's directory was changed: $(ls -A "$work/mine")"
echo "ok: a directory of other files is refused"
