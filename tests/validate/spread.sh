#!/usr/bin/env bash
# scripts/validate-launches.sh + validate-spread.py on a tiny scenario (64x64, sigma 1,
# P = 1 and 2, three launches): the table has a row per model and baseline in the
# "median [min-max]" format, and each number is the median / min / max of that figure
# in the three launches' own JSON files (recomputed here). A doctored launch must move
# the figures; a failing launch and a file that is not a summary must be errors.
# Timings are never checked.
#   spread.sh SOURCE_DIR BIN_DIR MPIEXEC
set -uo pipefail
src=$1 bin=$2 mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

timeout 100 "$mpiexec" -n 2 --oversubscribe "$bin/tessera-bench" --quick --max-seconds 40 \
  --perfdb "$work/perfdb.sqlite" >"$work/bench.out" 2>"$work/bench.err" || {
  cat "$work/bench.err"; fail "tessera-bench --quick failed"; }

# --max-wait 2: the bench above recorded its quiet reading in the perfdb; a launch that
# meets the slow state waits for the quiet one at most 2 s (the test checks figures, not the
# machine's state).
# (--repeats given per call: repeated, the option is refused whatever its value.)
common=(--quick --sizes 64 --sigmas 1 --extra 1 --max-wait 2 --perfdb "$work/perfdb.sqlite" --no-perfdb-record)
args=("${common[@]}" --repeats 3)
OUT="$work/launches" RANKS=2 BIN="$bin" MPIEXEC="$mpiexec" timeout 200 \
  "$src/scripts/validate-launches.sh" 3 "${args[@]}" >"$work/spread.txt" 2>"$work/launches.err" || {
  tail -30 "$work/launches.err"; fail "validate-launches.sh failed"; }
cat "$work/spread.txt"

check() {  # check TABLE FILES...: every cell is the statistic of the files' figures
  python3 - "$@" <<'PY'
import json, re, statistics, sys
table, files = sys.argv[1], sys.argv[2:]
text = open(table).read().splitlines()
assert text[0].startswith(f"tessera-validate over {len(files)} launches"), text[0]
launches = [json.load(open(f)) for f in files]
cell = re.compile(r"(-?\d+\.\d+)%? \[(-?\d+\.\d+)-(-?\d+\.\d+)\]")
rows = {}
for line in text[3:]:
    if not line or line.startswith("note:"):
        continue
    name = line.split()[0]
    rows[name] = line[len(name):]
figures = [("median_abs_rel_error", 100, 1), ("p90_abs_rel_error", 100, 1), ("mean_regret", 1, 3), ("max_regret", 1, 3)]
choosers = [("models", n) for n in launches[0]["models"]] + [("baselines", n) for n in launches[0]["baselines"]]
assert {"mpi-dims", "petsc-dmda", "row-strips", "p3pc"} <= {n for _, n in choosers}, choosers
for group, name in choosers:
    assert name in rows, f"no row for {name}"
    cells = [c for c in re.split(r"\s{2,}", rows[name].strip())]
    assert len(cells) == 4, f"{name}: {cells}"
    for (key, scale, digits), c in zip(figures, cells):
        if group == "baselines" and key.endswith("error"):
            assert c == "-", f"{name}.{key}: {c}"
            continue
        m = cell.fullmatch(c)
        assert m, f"{name}.{key}: '{c}' is not 'median [min-max]'"
        v = [scale * s[group][name][key] for s in launches]
        want = [statistics.median(v), min(v), max(v)]
        got = [float(x) for x in m.groups()]
        for w, g in zip(want, got):
            assert abs(w - g) <= 0.6 * 10 ** -digits, f"{name}.{key}: printed {got}, launches give {want}"
# The noise floor's row: regrets only, from each launch's "noise_floor".
assert all("noise_floor" in s for s in launches), "a launch without its noise floor"
cells = re.split(r"\s{2,}", rows["split-half"].strip())
assert len(cells) == 4 and cells[:2] == ["-", "-"], f"split-half: {cells}"
for (key, scale, digits), c in zip(figures[2:], cells[2:]):
    v = [s["noise_floor"][key] for s in launches]
    got = [float(x) for x in cell.fullmatch(c).groups()]
    for w, g in zip([statistics.median(v), min(v), max(v)], got):
        assert abs(w - g) <= 0.6 * 10 ** -digits, f"split-half.{key}: printed {got}, launches give {v}"
print("table ok:", len(choosers), "choosers and the noise floor from", len(files), "launches")
PY
}
files=("$work/launches/launch-1.json" "$work/launches/launch-2.json" "$work/launches/launch-3.json")
for f in "${files[@]}"; do [ -s "$f" ] || fail "missing $f"; done
check "$work/spread.txt" "${files[@]}" || fail "spread table does not match the launches"

# A launch doctored (p3pc's mean regret x 10): the table must follow it.
python3 - "${files[0]}" "$work/doctored.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["models"]["p3pc"]["mean_regret"] *= 10
s["models"]["p3pc"]["max_regret"] *= 10
json.dump(s, open(sys.argv[2], "w"))
PY
python3 "$src/scripts/validate-spread.py" "$work/doctored.json" "${files[1]}" "${files[2]}" >"$work/doctored.txt" ||
  fail "spread of the doctored launches"
check "$work/doctored.txt" "$work/doctored.json" "${files[1]}" "${files[2]}" || fail "doctored launch not followed"
cmp -s "$work/doctored.txt" "$work/spread.txt" && fail "a doctored launch left the table unchanged"

# --app: each app's own figures (the launches ran gauss, edges and corners at 64x64).
python3 "$src/scripts/validate-spread.py" --json --app edges "${files[@]}" >"$work/edges.json" ||
  fail "spread of --app edges"
python3 - "$work/edges.json" "${files[@]}" <<'PY' || fail "--app edges does not match the launches' apps.edges"
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
launches = [json.load(open(f))["apps"]["edges"] for f in sys.argv[2:]]
assert doc["app"] == "edges" and doc["launches"] == len(launches)
for group in ("models", "baselines"):
    for name in launches[0][group]:
        for key, f in doc["choosers"][name].items():
            want = [s[group][name][key] for s in launches]
            assert f["values"] == want and f["median"] == statistics.median(want), (name, key, f, want)
print("--app edges ok")
PY
python3 "$src/scripts/validate-spread.py" --app blur "${files[@]}" >/dev/null 2>&1 && fail "an app the launches lack was accepted"

# Not a summary, and a launch that fails: errors, not tables.
echo '{"x": 1}' >"$work/bad.json"
python3 "$src/scripts/validate-spread.py" "$work/bad.json" >/dev/null 2>&1 && fail "a file without models was accepted"
OUT="$work/bad" RANKS=2 BIN="$bin" MPIEXEC="$mpiexec" timeout 60 \
  "$src/scripts/validate-launches.sh" 2 "${common[@]}" --repeats 0 >/dev/null 2>"$work/bad.err" && fail "a failing launch was not an error"
grep -q -- "--repeats must be >= 1" "$work/bad.err" || fail "the failing launch failed for another reason: $(grep error "$work/bad.err")"

# One sample per plan (--repeats 1) has no halves: the launch still succeeds (the noise
# floor is left out where no plan has two samples) and the table still prints.
OUT="$work/one" RANKS=2 BIN="$bin" MPIEXEC="$mpiexec" timeout 100 \
  "$src/scripts/validate-launches.sh" 1 "${common[@]}" --repeats 1 >"$work/one.txt" 2>"$work/one.err" || {
  tail -5 "$work/one.err"; fail "a --repeats 1 launch failed"; }
grep -q "^p3pc " "$work/one.txt" || fail "no table for the --repeats 1 launch"
echo "ok"
