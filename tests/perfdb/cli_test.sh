#!/usr/bin/env bash
# CLI scenarios for tessera-perfdb. Usage: cli_test.sh TOOL DATA_DIR SCENARIO
# Each scenario works in a fresh temporary directory; any failed check exits non-zero.
set -u
tool=$1 data=$2 scenario=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
unset TESSERA_PERFDB
export HOME=$work XDG_DATA_HOME=$work/xdg  # never touch the real per-user database

fail() { echo "FAIL [$scenario]: $*" >&2; exit 1; }
# expect_error EXIT_CODE WORDS -- command...: non-zero exit, one stderr line naming WORDS,
# nothing on stdout.
expect_error() {
  local code=$1 words=$2; shift 3
  "$@" >out.txt 2>err.txt
  local rc=$?
  [[ $rc -eq $code ]] || fail "'$*' exited $rc, expected $code: $(cat err.txt)"
  [[ $(wc -l <err.txt) -eq 1 ]] || fail "'$*' printed $(wc -l <err.txt) error lines: $(cat err.txt)"
  grep -q -- "$words" err.txt || fail "'$*' error lacks '$words': $(cat err.txt)"
  [[ ! -s out.txt ]] || fail "'$*' wrote to stdout on error"
}

case $scenario in
csv_roundtrip)
  # Import the paper's Table 1, export it, import the export into a second database
  # (another checkout) and export again: both exports are identical.
  "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv" --machine das 2>/dev/null ||
    fail "import"
  "$tool" --perfdb a.sqlite export --csv --machine das --output first.csv || fail "export 1"
  [[ $(head -1 first.csv) == "path,layout,floats,time_us" ]] || fail "header"
  [[ $(wc -l <first.csv) -eq 61 ]] || fail "row count $(wc -l <first.csv)"
  "$tool" --perfdb b.sqlite import --csv=first.csv --machine das-copy 2>/dev/null || fail "import 2"
  "$tool" --perfdb b.sqlite export --csv >second.csv || fail "export 2"
  cmp first.csv second.csv || fail "exports differ"
  # Numerically the same as the published table (formatting may drop trailing zeros).
  paste -d, <(tail -n +2 "$data/das_table1.csv") <(tail -n +2 second.csv) |
    awk -F, '$1!=$5 || $2!=$6 || $3!=$7 || $4+0!=$8+0 {bad=1; print} END {exit bad}' ||
    fail "values differ from the source table"
  ;;
show_table)
  "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv" --machine das 2>/dev/null ||
    fail "import"
  "$tool" --perfdb a.sqlite show >show.txt || fail "show"
  grep -q "m=0 .*m=1K .*m=50K .*m=100K .*m=500K" show.txt || fail "size header: $(cat show.txt)"
  grep -Eq "^T_send,cc\(m\) +5\.98 +61\.72 +4355\.45 +10246\.77 +58596\.98$" show.txt ||
    fail "T_send,cc row"
  grep -Eq "^T_full,nn\(m\) +24\.47 +287\.89 +11746\.29 +25652\.54 +132399\.20$" show.txt ||
    fail "T_full,nn row"
  [[ $(grep -c "^T_" show.txt) -eq 12 ]] || fail "expected 12 rows"
  # Rows in the paper's order.
  grep "^T_" show.txt | cut -d'(' -f1 | tr '\n' ' ' | grep -q \
    "T_send,cc T_send,cn T_send,nc T_send,nn T_recv,cc T_recv,cn T_recv,nc T_recv,nn T_full,cc T_full,cn T_full,nc T_full,nn" ||
    fail "row order"
  "$tool" --perfdb a.sqlite show --run 1 --machine das >/dev/null || fail "show --run"
  "$tool" --perfdb a.sqlite list >list.txt || fail "list"
  grep -q "das" list.txt && grep -q "complete" list.txt || fail "list content"
  ;;
show_quality)
  # A run without recorded quality (a CSV import) says so; one with spreads and quality
  # (here edited into a JSON export) shows each cell's spread and the verdict, and
  # `list` has a quality column.
  "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv" --machine das 2>/dev/null ||
    fail "import"
  "$tool" --perfdb a.sqlite show >plain.txt || fail "show"
  grep -q "^Quality: not recorded" plain.txt || fail "no 'Quality: not recorded': $(cat plain.txt)"
  grep -q "±" plain.txt && fail "spread shown without passes"
  "$tool" --perfdb a.sqlite export --json >a.json || fail "export json"
  grep -q '"quality": null' a.json || fail "no null quality in the export"
  grep -q '"spread": null' a.json || fail "no null spread in the export"
  sed -e 's/"quality": null/"quality": {"median_spread": 0.021, "p90_spread": 0.074, "cells": 48, "passed": true}/' \
      -e 's/"spread": null/"spread": 0.0345/' -e 's/"passes": 0/"passes": 3/' a.json >q.json
  "$tool" --perfdb a.sqlite import --json q.json --machine das-q 2>/dev/null || fail "import json with quality"
  "$tool" --perfdb a.sqlite show --machine das-q >q.txt || fail "show quality"
  grep -q "^Quality: median 2.1 % p90 7.4 % over 48 cells: pass" q.txt || fail "quality line: $(grep Quality q.txt)"
  grep -Eq "^T_send,cc\(m\) +5\.98 ±3\.5% +61\.72 ±3\.5% +4355\.45 ±3\.5%" q.txt ||
    fail "T_send,cc row with spreads: $(grep T_send,cc q.txt)"
  [[ $(grep -c "^T_" q.txt) -eq 12 ]] || fail "expected 12 rows"
  "$tool" --perfdb a.sqlite list >list.txt || fail "list"
  grep -q "quality" list.txt || fail "no quality column: $(cat list.txt)"
  grep -Eq "das-q .* complete +pass 2\.1%/7\.4%" list.txt || fail "quality of das-q: $(cat list.txt)"
  grep -Eq "^ *1 +das .* complete +- " list.txt || fail "das without quality: $(cat list.txt)"
  # The JSON round trip keeps spread and quality.
  "$tool" --perfdb a.sqlite export --json --machine das-q >back.json || fail "export das-q"
  grep -q '"spread": 0.0345' back.json && grep -q '"passed": true' back.json || fail "spread/quality lost"
  ;;
json_roundtrip)
  "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv" --machine das 2>/dev/null ||
    fail "import"
  "$tool" --perfdb a.sqlite export --json >a.json || fail "export json"
  "$tool" --perfdb b.sqlite import --json a.json --machine das 2>/dev/null || fail "import json"
  "$tool" --perfdb b.sqlite export --json --output b.json || fail "export json 2"
  cmp a.json b.json || fail "JSON exports differ"
  "$tool" --perfdb b.sqlite export --csv >b.csv || fail "csv from json import"
  "$tool" --perfdb a.sqlite export --csv >a.csv || fail "csv"
  cmp a.csv b.csv || fail "CSV after JSON round trip differs"
  ;;
bad_input)
  printf 'path,layout,bytes,time_us\nsend,cc,0,1\n' >badheader.csv
  printf 'path,layout,floats,time_us\nsend,cc,0,1\nsend,cc,4,oops\n' >badrow.csv
  expect_error 1 "no performance database" -- "$tool" --perfdb none.sqlite show
  [[ ! -e none.sqlite ]] || fail "show created a database"
  expect_error 1 "badheader.csv:1: bad header" -- \
    "$tool" --perfdb a.sqlite import --csv badheader.csv --machine x
  expect_error 1 "badrow.csv:3: bad time_us" -- \
    "$tool" --perfdb a.sqlite import --csv badrow.csv --machine x
  [[ ! -e a.sqlite ]] || fail "a rejected import created the database"
  expect_error 1 "cannot read" -- "$tool" --perfdb a.sqlite import --csv missing.csv --machine x
  expect_error 2 "needs --machine" -- "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv"
  expect_error 2 "unknown command" -- "$tool" --perfdb a.sqlite frobnicate
  expect_error 2 "missing command" -- "$tool" --perfdb a.sqlite
  expect_error 2 "unrecognised option\|unrecognized option" -- "$tool" list --bogus
  expect_error 2 "exactly one of --csv and --json" -- "$tool" --perfdb a.sqlite export
  expect_error 2 "bad --run" -- "$tool" --perfdb a.sqlite show --run abc
  "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv" --machine das 2>/dev/null ||
    fail "import"
  expect_error 1 "already exists" -- \
    "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv" --machine das
  "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv" --machine das --replace \
    2>/dev/null || fail "--replace"
  expect_error 1 "no run 999" -- "$tool" --perfdb a.sqlite show --run 999
  # Integers too large say so, never "expected an integer >= 0".
  expect_error 1 "no run 99999999999999 (too large: the largest run id in a.sqlite is 2" -- \
    "$tool" --perfdb a.sqlite show --run 99999999999999
  expect_error 1 "no run 99999999999999 (too large" -- \
    "$tool" --perfdb a.sqlite delete --run 99999999999999
  expect_error 2 "bad --run '99999999999999999999' (too large" -- \
    "$tool" --perfdb a.sqlite show --run 99999999999999999999
  expect_error 2 "bad --run '-3' (expected a run id >= 1" -- "$tool" --perfdb a.sqlite show --run -3
  printf 'path,layout,floats,time_us\nsend,cc,99999999999999999999,1\n' >bigfloats.csv
  expect_error 1 "bad floats '99999999999999999999' (too large" -- \
    "$tool" --perfdb a.sqlite import --csv bigfloats.csv --machine big
  expect_error 1 "no machine 'nope'" -- "$tool" --perfdb a.sqlite show --machine nope
  expect_error 1 "no intra-node" -- "$tool" --perfdb a.sqlite export --csv --level intra
  expect_error 1 "bad level" -- "$tool" --perfdb a.sqlite export --csv --level both
  expect_error 1 "not valid JSON" -- \
    "$tool" --perfdb a.sqlite import --json "$data/das_table1.csv" --machine y
  echo '{"chosen": {}}' >plan.json
  expect_error 1 "not a tessera-perfdb JSON" -- "$tool" --perfdb a.sqlite import --json plan.json
  ;;
import_rules)
  # CSV and JSON imports follow the same rules, and a refused import changes nothing.
  "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv" --machine das 2>/dev/null ||
    fail "import"
  cp a.sqlite a.orig
  printf 'path,layout,floats,time_us\nsend,cc,0,1\nsend,cc,4,2\nfull,cc,0,3\n' >three.csv
  expect_error 1 "three.csv: incomplete inter-node P-3PC table: no samples for send,cn" -- \
    "$tool" --perfdb a.sqlite import --csv three.csv --machine three
  sed 's/^send,cc,1024,.*/send,cc,1024,1e308/' "$data/das_table1.csv" >huge.csv
  expect_error 1 "huge.csv:3: bad time_us 1e+308 (too large" -- \
    "$tool" --perfdb a.sqlite import --csv huge.csv --machine huge
  sed 's/^send,cc,1024,.*/send,cc,99999999999999999999,1/' "$data/das_table1.csv" >bigint.csv
  expect_error 1 "bad floats '99999999999999999999' (too large" -- \
    "$tool" --perfdb a.sqlite import --csv bigint.csv --machine big
  "$tool" --perfdb a.sqlite export --json >das.json || fail "export json"
  # The first P-3PC time negative: refused by JSON import as by CSV import.
  awk '/"median_us"/ && !done {sub(/: [0-9.e+-]+/, ": -5"); done=1} {print}' das.json >neg.json
  grep -q '"median_us": -5' neg.json || fail "test setup: no negative time in neg.json"
  expect_error 1 "neg.json: runs.0..p3pc.0.: bad median_us -5 (must be >= 0)" -- \
    "$tool" --perfdb a.sqlite import --json neg.json --machine neg
  cmp a.sqlite a.orig || fail "a refused import changed the database"
  [[ ! -e a.sqlite-wal || ! -s a.sqlite-wal ]] || fail "a refused import left a write-ahead log"
  expect_error 1 "incomplete" -- "$tool" --perfdb new.sqlite import --csv three.csv --machine t
  [[ ! -e new.sqlite ]] || fail "a refused import created the database"
  "$tool" --perfdb a.sqlite import --json das.json --machine das2 2>/dev/null ||
    fail "a valid export is refused"
  ;;
export_output)
  # --output FILE is all or nothing, failures give the system's reason, and a temporary
  # file left by a killed export is removed by the next one.
  "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv" --machine das 2>/dev/null ||
    fail "import"
  "$tool" --perfdb a.sqlite export --csv >stdout.csv || fail "export to stdout"
  touch .out.csv.tessera-tmp.999999999 .other.csv.tessera-tmp.999999999
  "$tool" --perfdb a.sqlite export --csv --output out.csv || fail "export --output"
  cmp stdout.csv out.csv || fail "--output differs from stdout"
  [[ ! -e .out.csv.tessera-tmp.999999999 ]] || fail "stale temporary file not removed"
  [[ -e .other.csv.tessera-tmp.999999999 ]] || fail "another file's temporary was removed"
  [[ -z $(ls -A | grep "^\.out\.csv\.tessera-tmp") ]] || fail "temporary file left: $(ls -A)"
  expect_error 1 "cannot write missing/out.csv (create temporary file): No such file or directory" -- \
    "$tool" --perfdb a.sqlite export --csv --output missing/out.csv
  mkdir adir
  expect_error 1 "Is a directory" -- "$tool" --perfdb a.sqlite export --json --output adir
  [[ -z $(ls -A adir) && -z $(ls -A | grep "^\.adir\.") ]] || fail "a failed export left files"
  expect_error 1 "cannot write to standard output: No space left on device" -- \
    bash -c "\"\$0\" --perfdb a.sqlite export --csv >/dev/full" "$tool"
  ! grep -rq "Success" err.txt || fail "an error said Success"
  ;;
corrupt_refused)
  "$tool" --perfdb good.sqlite import --csv "$data/das_table1.csv" --machine das 2>/dev/null ||
    fail "import"
  head -c 5000 good.sqlite >truncated.sqlite
  cp "$data/das_table1.csv" text.sqlite
  cp truncated.sqlite truncated.orig
  cp text.sqlite text.orig
  for f in truncated text; do
    for cmd in list show "export --csv" "import --csv $data/das_table1.csv --machine z" \
               "delete --machine das"; do
      expect_error 1 "$f.sqlite" -- "$tool" --perfdb $f.sqlite $cmd
      cmp $f.sqlite $f.orig || fail "$cmd modified $f.sqlite"
    done
  done
  ;;
delete)
  "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv" --machine das 2>/dev/null ||
    fail "import"
  "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv" --machine das2 2>/dev/null ||
    fail "import 2"
  "$tool" --perfdb a.sqlite delete --run 1 2>/dev/null || fail "delete run"
  expect_error 1 "no complete run" -- "$tool" --perfdb a.sqlite show --machine das
  "$tool" --perfdb a.sqlite delete --machine das 2>/dev/null || fail "delete machine"
  "$tool" --perfdb a.sqlite show >/dev/null || fail "the only machine left is the default"
  expect_error 2 "exactly one of --run ID and --machine NAME" -- "$tool" --perfdb a.sqlite delete
  expect_error 1 "no machine 'das'" -- "$tool" --perfdb a.sqlite delete --machine das
  ;;
help_version)
  "$tool" --help | grep -q "import --csv FILE" || fail "--help"
  "$tool" --version | grep -q "^tessera-perfdb " || fail "--version"
  # The documented default path is used without --perfdb.
  "$tool" import --csv "$data/das_table1.csv" --machine das 2>/dev/null || fail "default import"
  [[ -f $work/xdg/tessera/perfdb.sqlite ]] || fail "default path not used"
  TESSERA_PERFDB=$work/env.sqlite "$tool" import --csv "$data/das_table1.csv" --machine das \
    2>/dev/null || fail "env import"
  [[ -f $work/env.sqlite ]] || fail "\$TESSERA_PERFDB not used"
  ;;
validate_record_after)
  # tessera-validate records each launch as a complete run without measurements; show and
  # export without --run still find the machine's table, an explicit --run still says so.
  "$tool" --perfdb a.sqlite import --csv "$data/das_table1.csv" --machine das 2>/dev/null ||
    fail "import"
  python3 - a.sqlite <<'PY' || fail "adding a validate record"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO runs (machine_id, tool, started_at, ended_at, status) "
           "SELECT id, 'tessera-validate', '2026-12-03T14:00:00Z', '2026-12-03T14:00:00Z', "
           "'complete' FROM machines WHERE name = 'das'")
db.commit()
PY
  "$tool" --perfdb a.sqlite export --csv >out.csv || fail "export after a validate record"
  [[ $(wc -l <out.csv) -eq 61 ]] || fail "row count $(wc -l <out.csv)"
  "$tool" --perfdb a.sqlite show >show.txt || fail "show after a validate record"
  grep -q "^T_send,cc(m)" show.txt || fail "show lacks the table: $(cat show.txt)"
  expect_error 1 "no intra-node P-3PC measurements" -- "$tool" --perfdb a.sqlite export --csv --run 2 --level intra
  ;;
*) fail "unknown scenario" ;;
esac
echo "ok [$scenario]"
