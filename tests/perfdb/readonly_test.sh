#!/usr/bin/env bash
# A performance database in a read-only directory: the read-only tools (tessera-perfdb
# list/show/export, tessera-plan) read it; writers and unusable databases fail with the
# real reason; nothing is created or changed. Root ignores permission bits, so the
# directory is a read-only bind mount (unmounted on every exit).
#   readonly_test.sh PERFDB_TOOL PLAN_TOOL DATA_DIR
# Exit 77 (skipped, with the reason) only if this process cannot mount.
set -u
tool=$1 plan=$2 data=$3
work=$(mktemp -d)
src=$work/src ro=$work/ro
cleanup() {
  umount "$ro" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
unset TESSERA_PERFDB
export HOME=$work XDG_DATA_HOME=$work/xdg  # never touch the real per-user database

fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_error WORDS -- command...: exit 1, one stderr line with WORDS, never "corrupt"
# unless WORDS says so, no bundled-default fallback, nothing on stdout.
expect_error() {
  local words=$1; shift 2
  "$@" >out.txt 2>err.txt
  local rc=$?
  [[ $rc -eq 1 ]] || fail "'$*' exited $rc, expected 1: $(cat err.txt)"
  [[ $(wc -l <err.txt) -eq 1 ]] || fail "'$*' printed $(wc -l <err.txt) lines: $(cat err.txt)"
  grep -qF -- "$words" err.txt || fail "'$*' error lacks '$words': $(cat err.txt)"
  [[ $words == *corrupt* ]] || ! grep -q corrupt err.txt || fail "'$*' says corrupt: $(cat err.txt)"
  [[ ! -s out.txt ]] || fail "'$*' wrote to stdout: $(head -3 out.txt)"
}
plan_args=(--width 512 --height 512 --sigma 1 --procs 4 --json)

mkdir -p "$src" "$ro"
"$tool" --perfdb "$src/a.sqlite" import --csv "$data/das_table1.csv" --machine das 2>/dev/null ||
  fail "import"
"$tool" --perfdb "$src/a.sqlite" export --csv >before.csv || fail "export before mounting"
: >"$src/empty.sqlite"
cp "$data/das_table1.csv" "$src/text.sqlite"
(cd "$src" && ls -A && md5sum ./*) >before.lst

if ! mount --bind "$src" "$ro" 2>mount.err || ! mount -o remount,ro,bind "$ro" 2>>mount.err; then
  echo "SKIPPED: cannot make a read-only bind mount here: $(tr '\n' ' ' <mount.err)"
  exit 77
fi
touch "$ro/probe" 2>/dev/null && fail "the bind mount is writable"

# Readers read (the file is in WAL mode and the directory cannot hold its -shm).
"$tool" --perfdb "$ro/a.sqlite" list >list.txt 2>err.txt || fail "list: $(cat err.txt)"
grep -q "das" list.txt || fail "list lacks the machine"
"$tool" --perfdb "$ro/a.sqlite" show >/dev/null 2>err.txt || fail "show: $(cat err.txt)"
"$tool" --perfdb "$ro/a.sqlite" export --csv >after.csv 2>err.txt || fail "export: $(cat err.txt)"
cmp before.csv after.csv || fail "export from the read-only directory differs"
"$plan" "${plan_args[@]}" --perfdb "$ro/a.sqlite" --machine das >plan.json 2>err.txt ||
  fail "tessera-plan: $(cat err.txt)"
grep -q "\"source\": \"perfdb $ro/a.sqlite run 1" plan.json || fail "plan source: $(grep source plan.json)"
! grep -q "bundled" err.txt || fail "tessera-plan mentions the bundled table: $(cat err.txt)"

# Writers fail with the system's reason.
expect_error "Read-only file system" -- \
  "$tool" --perfdb "$ro/a.sqlite" import --csv "$data/das_table1.csv" --machine das2
expect_error "Read-only file system" -- "$tool" --perfdb "$ro/a.sqlite" delete --machine das
expect_error "Read-only file system" -- "$tool" --perfdb "$ro/new.sqlite" import \
  --csv "$data/das_table1.csv" --machine das
expect_error "Read-only file system" -- "$tool" --perfdb "$ro/a.sqlite" export --csv \
  --output "$ro/x.csv"

# A named database that is missing, empty or not a database is an error, never the
# bundled 2001 table.
expect_error "no performance database at $ro/none.sqlite" -- \
  "$plan" "${plan_args[@]}" --perfdb "$ro/none.sqlite"
TESSERA_PERFDB=$ro/none.sqlite expect_error "no performance database at $ro/none.sqlite" -- \
  "$plan" "${plan_args[@]}"
expect_error "is empty" -- "$plan" "${plan_args[@]}" --perfdb "$ro/empty.sqlite"
expect_error "not an SQLite file" -- "$plan" "${plan_args[@]}" --perfdb "$ro/text.sqlite"
expect_error "is empty" -- "$tool" --perfdb "$ro/empty.sqlite" list
expect_error "no performance database" -- "$tool" --perfdb "$ro/none.sqlite" show

umount "$ro" || fail "umount"
(cd "$src" && ls -A && md5sum ./*) >after.lst
diff before.lst after.lst >&2 || fail "the database directory changed"
echo "ok [readonly]"
