#!/usr/bin/env bash
# tessera-validate's mistakes: each must end every rank with one error line and a
# non-zero exit, without hanging.
#   bad_input.sh BIN_DIR MPIEXEC
set -uo pipefail
bin=$1 mpiexec=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
check() {  # ranks expected-text args...
  local ranks=$1 expected=$2
  shift 2
  timeout 60 "$mpiexec" -n "$ranks" --oversubscribe "$bin/tessera-validate" --perfdb "$work/db.sqlite" \
    --output "$work/out" "$@" >"$work/stdout" 2>"$work/stderr"
  local code=$?
  local lines
  lines=$(grep -c "^tessera-validate: error:" "$work/stderr")
  if [ $code -eq 124 ] || [ $code -eq 0 ] || [ "$lines" -ne 1 ] ||
     ! grep "^tessera-validate: error:" "$work/stderr" | grep -qF -- "$expected"; then
    echo "FAIL ($*): exit $code, $lines error lines, expected '$expected'"; cat "$work/stderr"; status=1
  else
    echo "ok: $(grep '^tessera-validate: error:' "$work/stderr")"
  fi
}
check 1 "give --procs values <= ranks" --quick --procs 2
check 2 "unknown model" --quick --models p3pc,magic
check 2 "unknown app 'blur' in --apps" --quick --apps gauss,blur
check 2 "bad --procs value" --quick --procs two
check 2 "--repeats must be >= 1" --quick --repeats 0
check 2 "--max-wait must be >= 0 seconds" --quick --max-wait -1
check 2 "--warm-runs must be >= 0" --quick --warm-runs -1
check 2 "unrecognised option" --quick --colour blue
# A path with a space is a path, not two words ("the argument ... is invalid" before):
# with one rank and --procs 2 the run still stops, but at the rank count, after --output parsed.
timeout 60 "$mpiexec" -n 1 "$bin/tessera-validate" --perfdb "$work/db.sqlite" --output "$work/out dir" --quick \
  --procs 2 >"$work/stdout" 2>"$work/stderr"
if grep -q "give --procs values" "$work/stderr" && ! grep -q "invalid" "$work/stderr"; then
  echo "ok: --output with a space parsed"
else
  echo "FAIL: --output with a space"; cat "$work/stderr"; status=1
fi
# --output is a result set: a directory holding the user's own files is refused before
# anything is measured, and left as it was.
mkdir -p "$work/mine" && echo keep >"$work/mine/notes.txt"
timeout 60 "$mpiexec" -n 2 --oversubscribe "$bin/tessera-validate" --perfdb "$work/db.sqlite" --output "$work/mine" \
  --quick >"$work/stdout" 2>"$work/stderr"
code=$?
if [ $code -ne 0 ] && [ $code -ne 124 ] && grep -q "^tessera-validate: error: refusing to replace" "$work/stderr" &&
   [ "$(cat "$work/mine/notes.txt")" = keep ] && [ "$(ls -A "$work/mine")" = notes.txt ] &&
   [ -z "$(ls -A "$work" | grep tessera-tmp)" ]; then
  echo "ok: $(grep '^tessera-validate: error:' "$work/stderr")"
else
  echo "FAIL: --output over a user's directory: exit $code"; cat "$work/stderr"; ls -A "$work" "$work/mine"; status=1
fi
exit $status
