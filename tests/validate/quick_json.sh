#!/usr/bin/env bash
# tessera-validate --quick --json end to end on RANKS ranks, against a perfdb measured
# here by tessera-bench --quick: the summary JSON has every model's figures and the
# baselines', over every app and per app (gauss's two problems, edges' and corners' one
# each), every problem is measured at every P from 1 to RANKS and each chooser's
# decision over P is reported, stdout holds nothing else, the charts, CSV and index
# exist, tessera-plan prices every observation as recorded (scripts/validate-reprice.py,
# and the apps' totals scripts/reprice-apps.py), and the validation run is stored in the perfdb. Timings are never checked.
#   quick_json.sh BIN_DIR MPIEXEC RANKS
set -uo pipefail
bin=$1 mpiexec=$2 ranks=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ -f "$work/stderr" ] && { echo "--- stderr:"; tail -30 "$work/stderr"; }; exit 1; }

timeout 100 "$mpiexec" -n 2 --oversubscribe "$bin/tessera-bench" --quick --max-seconds 40 \
  --perfdb "$work/perfdb.sqlite" >"$work/bench.out" 2>"$work/bench.err" || {
  cat "$work/bench.err"; fail "tessera-bench --quick failed"; }

timeout 180 "$mpiexec" -n "$ranks" --oversubscribe "$bin/tessera-validate" --quick --json --repeats 3 --max-wait 2 \
  --perfdb "$work/perfdb.sqlite" --output "$work/out" >"$work/stdout" 2>"$work/stderr"
code=$?
[ $code -ne 124 ] || fail "timed out"
[ $code -eq 0 ] || fail "exit code $code"

python3 - "$work/stdout" "$ranks" <<'PY' || fail "summary JSON"
import json, math, sys
s = json.load(open(sys.argv[1]))  # stdout must be exactly one JSON document
models = s["models"]
assert "p3pc" in models, "p3pc missing"
for name in ["p3pc", "3pc", "loggp-star", "log3p", "2log23p", "loggp", "logpc"]:
    assert name in models or any(name in n for n in s["notes"]), f"{name} neither validated nor noted as skipped"
for name, m in models.items():
    for key in ["median_abs_rel_error", "p90_abs_rel_error", "mean_regret", "max_regret"]:
        v = m[key]
        assert isinstance(v, (int, float)) and math.isfinite(v) and v >= 0, f"{name}.{key} = {v}"
    assert m["median_abs_rel_error"] <= m["p90_abs_rel_error"], f"{name}: median above p90"
    assert 1 <= m["mean_regret"] <= m["max_regret"], f"{name}: regret below 1 or mean above max"
    assert m["observations"] > 0, f"{name}: no observations"
    for phase in ["scatter", "exchange", "compute", "gather", "total"]:
        assert m["phases"][phase]["observations"] > 0, f"{name}: no {phase} observations"
ranks = int(sys.argv[2])
procs = sorted({sc["procs"] for sc in s["scenarios"]})
assert procs == list(range(1, ranks + 1)), f"quick covers P = 1..{ranks}, got {procs}"
problems = 4
assert len(s["scenarios"]) == problems * ranks, "quick = four problems at every P"
apps = [sc["app"] for sc in s["scenarios"]]
assert apps.count("gauss") == 2 * ranks and apps.count("edges") == ranks and apps.count("corners") == ranks, apps
assert set(s["apps"]) == {"gauss", "edges", "corners"}, list(s["apps"])
for app, a in s["apps"].items():
    for name, m in a["models"].items():
        assert m["problems"] == (2 if app == "gauss" else 1), f"{app} {name} decisions over P"
        for phase in ["scatter", "exchange", "compute", "gather", "total"]:
            assert m["phases"][phase]["observations"] > 0, f"{app} {name}: no {phase} observations"
for name in ["mpi-dims", "petsc-dmda", "row-strips"]:
    b = s["baselines"][name]
    assert 1 <= b["mean_regret"] <= b["max_regret"], f"{name} regret"
    assert b["problems"] == problems, f"{name}: one decision per problem"
    assert b["fixed_procs"]["scenarios"] == problems * ranks, f"{name}: a decision at every P"
for name, m in models.items():
    assert m["problems"] == problems and m["fixed_procs"]["scenarios"] == problems * ranks, f"{name} decisions"
choosers = set(models) | {"mpi-dims", "petsc-dmda", "row-strips"}
# The noise floor (split halves of each plan's rounds): one decision per problem too,
# its regret the mean of both ways, so not chosen_us / best_us of one way alone.
floor = s["noise_floor"]
assert floor["problems"] == problems and 1 <= floor["mean_regret"] <= floor["max_regret"], floor
assert len(s["decisions"]) == problems * (len(choosers) + 1), "one decision over P per problem and chooser"
for d in s["decisions"]:
    assert 1 <= d["chosen_procs"] <= ranks and 1 <= d["best_procs"] <= ranks
    assert d["best_us"] <= d["chosen_us"]
    if d["chooser"] == "split-half":
        assert d["regret"] >= 1, d
        continue
    assert d["chooser"] in choosers
    assert abs(d["regret"] - d["chosen_us"] / d["best_us"]) < 1e-9
    if d["chooser"] in ("mpi-dims", "petsc-dmda", "row-strips"):
        assert d["chosen_procs"] == ranks, "a baseline runs on every rank started"
assert sorted(s["by_procs"], key=int) == [str(p) for p in procs], "figures for every P"
for p, f in s["by_procs"].items():
    assert set(f["choosers"]) == choosers and len(f["best_us"]) == problems, f"by_procs {p}"
# The machine-state reading: two ranks read a latency; the wait stays within its budget
# (2 s, plus the one sleep and reading that ends it), or is off when the node is oversubscribed.
lat = s["pair_latency"]
assert lat["slow_factor"] == 1.6 and lat["max_wait_s"] in (0, 2), lat
if ranks >= 2:
    assert 0 < lat["lowest_us"] <= lat["median_us"] <= lat["highest_us"], lat
    # The quiet state it judges by: its own lowest reading, or the perfdb's runs' if lower.
    assert 0 < lat["quiet_us"] <= lat["lowest_us"], lat
assert 0 <= lat["waited_s"] <= lat["max_wait_s"] + 1, lat
assert lat["rounds"] > 0 and 0 <= lat["slow_after_rounds"] <= lat["rounds"], lat
assert any(n.startswith("latency between ranks 0 and 1") for n in s["notes"]), "no latency note"
# Each timed run follows one untimed run of its own plan by default (--warm-runs 1).
assert s["warm_runs"] == 1, s.get("warm_runs")
assert any("untimed run(s) of the same plan" in n for n in s["notes"]), "no warm-runs note"
print("summary ok:", {k: round(v["median_abs_rel_error"], 3) for k, v in models.items()})
PY

out=$work/out
for f in .tessera-manifest.json index.md errors.svg regret.svg observations.csv accuracy.csv decisions.csv; do
  [ -s "$out/$f" ] || fail "missing $f"
done
phase_charts=$(ls "$out"/phase-*.svg 2>/dev/null | wc -l)
[ "$phase_charts" -eq $((20 * ranks)) ] || fail "expected $((20 * ranks)) phase charts (4 problems x $ranks P x 5 phases), got $phase_charts"
for f in "$out"/*.svg; do
  python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" "$f" || fail "$f is not well-formed XML"
  grep -q "<rect" "$f" || fail "$f has no bars"
done
for f in errors.svg regret.svg observations.csv; do grep -qF "($f)" "$out/index.md" || fail "index does not link $f"; done
grep -qF "(phase-512x512-s1-p$ranks-scatter.svg)" "$out/index.md" || fail "index does not link the scatter chart"
grep -qF "(phase-edges-128x128-s1-p$ranks-compute.svg)" "$out/index.md" || fail "index does not link edges' compute chart"

# Every model's every prediction is tessera-plan's for that plan (one pricing, two
# consumers), and scripts/validate-reprice.py, which A/B-tests pricing changes on recorded
# measurements, reproduces them: its --check fails on the first that differs.
reprice=$(dirname "$0")/../../scripts/validate-reprice.py
python3 "$reprice" --plan "$bin/tessera-plan" --models all --check "$out:$work/perfdb.sqlite" >"$work/reprice" 2>&1 || {
  cat "$work/reprice"; fail "validate-reprice: tessera-plan does not price the observations as recorded"; }
python3 "$reprice" --plan "$bin/tessera-plan" "$work/none:$work/perfdb.sqlite" >/dev/null 2>"$work/reprice.err" &&
  fail "validate-reprice accepted a directory without observations"
[ "$(wc -l <"$work/reprice.err")" -eq 1 ] && grep -q "observations.csv" "$work/reprice.err" ||
  { cat "$work/reprice.err"; fail "validate-reprice's error is not one line naming the file"; }

# The same for the apps' whole runs (scripts/reprice-apps.py, which reprices edges' and
# corners' measurements on other databases), and its one-line error.
apps=$(dirname "$0")/../../scripts/reprice-apps.py
python3 "$apps" --plan "$bin/tessera-plan" --check --perfdb "$work/perfdb.sqlite" "$out" >"$work/apps" 2>&1 || {
  cat "$work/apps"; fail "reprice-apps: tessera-plan does not price the apps' totals as recorded"; }
grep -q "total   n" "$work/apps" || { cat "$work/apps"; fail "reprice-apps printed no totals"; }
python3 "$apps" --plan "$bin/tessera-plan" --perfdb "$work/perfdb.sqlite" "$work/none" >/dev/null 2>"$work/apps.err" &&
  fail "reprice-apps accepted a directory without observations"
[ "$(wc -l <"$work/apps.err")" -eq 1 ] && grep -q "observations.csv" "$work/apps.err" ||
  { cat "$work/apps.err"; fail "reprice-apps's error is not one line naming the file"; }

"$bin/tessera-perfdb" --perfdb "$work/perfdb.sqlite" list >"$work/list" 2>&1 || fail "tessera-perfdb list"
grep -q "tessera-validate" "$work/list" || { cat "$work/list"; fail "no tessera-validate run in the perfdb"; }
echo "ok"
