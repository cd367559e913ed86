#!/usr/bin/env bash
# One bad-input case of tessera-gauss (or of $TESSERA_APP: tessera-edges, -corners): must exit non-zero within the timeout, print
# exactly one error line naming the problem, and leave no output files behind.
#   gauss_bad_input.sh BIN_DIR RANKS EXPECTED_TEXT -- ARGS...
# ARGS may use @WORK@ for a scratch directory (output goes to @WORK@/out).
set -uo pipefail
bin=$1 ranks=$2 expected=$3
app=${TESSERA_APP:-tessera-gauss}
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'this is not an image\n' >"$work/not-an-image.png"
: >"$work/a-file"
args=()
for a in "$@"; do args+=("${a//@WORK@/$work}"); done
timeout 60 mpirun -n "$ranks" --oversubscribe "$bin/$app" "${args[@]}" >"$work/stdout" 2>"$work/stderr"
code=$?
fail() { echo "FAIL: $*"; echo "--- stderr:"; cat "$work/stderr"; exit 1; }
[ $code -ne 124 ] || fail "timed out (hang)"
[ $code -ne 0 ] || fail "exit code 0"
errors=$(grep -c "^$app: error:" "$work/stderr")
[ "$errors" -eq 1 ] || fail "expected exactly one error line, got $errors"
grep "^$app: error:" "$work/stderr" | grep -qF -- "$expected" || fail "error does not mention '$expected'"
if [ -d "$work/out" ] && [ -n "$(ls -A "$work/out")" ]; then fail "left files behind: $(ls -A "$work/out")"; fi
if ls -A "$work" | grep -q tessera-tmp; then fail "left a temporary directory behind: $(ls -A "$work")"; fi
grep -q "Success" "$work/stderr" && fail "the error says 'Success'"
echo "ok (exit $code): $(grep "^$app: error:" "$work/stderr")"
