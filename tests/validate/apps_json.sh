#!/usr/bin/env bash
# tessera-validate on the apps' programs alone (--apps edges,corners, 64x64, sigma 1, P = 1
# and 2 on 2 ranks), against a perfdb measured here by tessera-bench --quick: the summary
# JSON names each scenario's app, has each app's figures for every model (accuracy of
# every phase, regret over P) and every baseline, a decision over P per app and chooser,
# and no gauss scenario; observations.csv has every model's predictions of both apps.
# Timings are never checked.
#   apps_json.sh BIN_DIR MPIEXEC
set -uo pipefail
bin=$1 mpiexec=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ -f "$work/stderr" ] && { echo "--- stderr:"; tail -30 "$work/stderr"; }; exit 1; }

timeout 100 "$mpiexec" -n 2 --oversubscribe "$bin/tessera-bench" --quick --max-seconds 40 \
  --perfdb "$work/perfdb.sqlite" >"$work/bench.out" 2>"$work/bench.err" || {
  cat "$work/bench.err"; fail "tessera-bench --quick failed"; }

timeout 150 "$mpiexec" -n 2 --oversubscribe "$bin/tessera-validate" --apps edges,corners --sizes 64 --sigmas 1 \
  --repeats 3 --extra 2 --max-wait 0 --json --no-perfdb-record --perfdb "$work/perfdb.sqlite" --output "$work/out" \
  >"$work/stdout" 2>"$work/stderr"
code=$?
[ $code -ne 124 ] || fail "timed out"
[ $code -eq 0 ] || fail "exit code $code"

python3 - "$work/stdout" "$work/out/observations.csv" <<'PY' || fail "summary JSON"
import csv, json, math, sys
s = json.load(open(sys.argv[1]))
scenarios = [(sc["app"], sc["width"], sc["procs"]) for sc in s["scenarios"]]
assert scenarios == [("edges", 64, 1), ("edges", 64, 2), ("corners", 64, 1), ("corners", 64, 2)], scenarios
models = list(s["models"])
assert "p3pc" in models, models
for name in ["p3pc", "3pc", "loggp-star", "log3p", "2log23p", "loggp", "logpc"]:
    assert name in models or any(name in n for n in s["notes"]), f"{name} neither validated nor noted as skipped"
assert set(s["apps"]) == {"edges", "corners"}, list(s["apps"])
baselines = ["mpi-dims", "petsc-dmda", "row-strips"]
for app, a in s["apps"].items():
    assert set(a["models"]) == set(models), f"{app}: models {list(a['models'])}"
    for name, m in a["models"].items():
        for key in ["median_abs_rel_error", "p90_abs_rel_error", "mean_regret", "max_regret"]:
            v = m[key]
            assert isinstance(v, (int, float)) and math.isfinite(v) and v >= 0, f"{app} {name}.{key} = {v}"
        assert m["median_abs_rel_error"] <= m["p90_abs_rel_error"], f"{app} {name}: median above p90"
        assert 1 <= m["mean_regret"] <= m["max_regret"], f"{app} {name}: regret"
        assert m["problems"] == 1 and m["fixed_procs"]["scenarios"] == 2, f"{app} {name}: decisions"
        for phase in ["scatter", "exchange", "compute", "gather", "total"]:
            assert m["phases"][phase]["observations"] > 0, f"{app} {name}: no {phase} observations"
    for b in baselines:
        assert a["baselines"][b]["problems"] == 1 and a["baselines"][b]["mean_regret"] >= 1, f"{app} {b}"
for name in models:
    assert s["models"][name]["problems"] == 2, f"{name}: one decision per app"
choosers = set(models) | set(baselines) | {"split-half"}
for app in ("edges", "corners"):
    assert s["apps"][app]["noise_floor"]["problems"] == 1, f"{app}: noise floor"
    mine = [d for d in s["decisions"] if d["app"] == app]
    assert {d["chooser"] for d in mine} == choosers and len(mine) == len(choosers), f"{app} decisions"
    for d in mine:
        assert d["best_us"] <= d["chosen_us"]
        if d["chooser"] != "split-half":  # the mean of both ways (quick_json.sh)
            assert abs(d["regret"] - d["chosen_us"] / d["best_us"]) < 1e-9
rows = list(csv.DictReader(open(sys.argv[2])))
for app in ("edges", "corners"):
    for name in models:
        phases = {r["phase"] for r in rows if r["app"] == app and r["model"] == name}
        assert phases == {"scatter", "exchange", "compute", "gather", "total"}, f"{app} {name}: csv phases {phases}"
# edges' hysteresis exchanges inside compute: its compute is measured per exchange algorithm.
labels = {r["label"] for r in rows if r["app"] == "edges" and r["phase"] == "compute"}
assert {"1x2 4step", "1x2 nonblocking"} <= labels, labels
# --max-wait 0: the latency is read and reported, no round waits for it.
lat = s["pair_latency"]
assert lat["max_wait_s"] == 0 and lat["waited_s"] == 0 and lat["lowest_us"] > 0, lat
assert any("no round waited (--max-wait 0)" in n for n in s["notes"]), "no latency note"
print("apps ok:", {app: {k: round(v["median_abs_rel_error"], 3) for k, v in a["models"].items()}
                   for app, a in s["apps"].items()})
PY
grep -q "hysteresis ran" "$work/stdout" || fail "no note on the hysteresis rounds"
grep -qF "(phase-corners-64x64-s1-p2-total.svg)" "$work/out/index.md" || fail "index does not link corners' chart"
echo "ok"
