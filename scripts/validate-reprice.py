#!/usr/bin/env python3
"""Prices a validation's measured observations again, with other binaries: an A/B of a
pricing change on one fixed set of measurements.

    validate-reprice.py --plan TESSERA_PLAN [--plan TESSERA_PLAN ...] [--models p3pc,...|all]
                        [--by-phase] [--json] [--check] OUT_DIR:PERFDB [OUT_DIR:PERFDB ...]

OUT_DIR is a `tessera-validate --output` directory (its observations.csv), PERFDB the
database it validated. For every (size, sigma, P, model) of the observations each
`tessera-plan` prices every candidate (`--app gauss --procs P --top 0 --json`, the pricing
tessera-validate records), and each observation gets the phase of the candidates that
use its grid and algorithms. Gauss's observations only: the apps' programs (edges,
corners) are validated with the exchanges inside their loops timed and priced as compute,
which tessera-plan's phases are not (their whole runs would agree).

Prints, per directory and over all of them, the median and 90th-percentile absolute
relative error of the recorded predictions and of each binary's (tessera-validate's
overall figure: accuracy.csv's "all", every phase but compute, and whole runs), and the
mean and maximum regret of their picks (per model, size and sigma: the measured whole run
of the candidate ranked first among those the validation measured, at every P, over the
best measured; one model's figures with --models);
--by-phase adds the signed median error per P, phase and size. A binary that recorded the
corpus must price every observation as recorded: --check exits 1, naming the first that
differs (beyond 1e-6 relative), unless every binary does (the test that
tessera-validate's predictions are tessera-plan's).

Two validations of one database measure the same things minutes apart, and their
difference is the machine's (on this project's VM up to 25 points on a phase's signed
error between consecutive launches); pricing one set of measurements twice takes that
noise out of the comparison. The corpus does not say how a change would move the
measurements themselves (a new plan the scheduler would pick is measured only if the
validation ran it).
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict

ALL_MODELS = ("p3pc", "3pc", "loggp-star", "log3p", "2log23p", "loggp", "logpc")
PHASES = ("scatter", "exchange", "compute", "gather", "total")
ALGORITHMS = ("scatter", "gather", "exchange")  # the observation columns a candidate must match when set


def fail(message):
    sys.exit(f"validate-reprice: {message}")


def quantile(values, q):
    """tessera::stats::quantile's: linear between the closest ranks (which the validation's
    figures use); statistics.quantiles refuses a single value on Python 3.11."""
    if not values:
        fail("no observation with a measured phase or whole run to summarise")
    v = sorted(values)
    i = q * (len(v) - 1)
    lo = int(i)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (i - lo) * (v[hi] - v[lo])


def load_observations(directory, models):
    path = os.path.join(directory, "observations.csv")
    if not os.path.isfile(path):
        fail(f"{path}: no such file (a tessera-validate --output directory?)")
    rows = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        need = {"width", "height", "sigma", "procs", "phase", "grid", "measured_us", "model", "predicted_us", "app"}
        if not need <= set(reader.fieldnames or []):
            fail(f"{path}: missing columns {sorted(need - set(reader.fieldnames or []))}")
        for r in reader:
            # The apps' programs (edges, corners) time the exchanges inside their loops as
            # compute, which tessera-plan's phases do not: gauss's observations only.
            if r["model"] not in models or r["app"] != "gauss":
                continue
            if r["phase"] not in PHASES:
                fail(f"{path}: unknown phase '{r['phase']}'")
            r["_dir"] = directory
            rows.append(r)
    if not rows:
        fail(f"{path}: no gauss observations of {','.join(sorted(models))}")
    return rows


def price_all(plan, perfdb, machine, ranks_per_node, app, width, height, sigma, procs, model):
    """tessera-plan's candidates of one problem: [(grid, {algorithm: name}, {phase: us})]."""
    cmd = [plan, "--app", app, "--width", width, "--height", height, "--sigma", sigma, "--procs", procs,
           "--model", model, "--top", "0", "--json", "--perfdb", perfdb]
    cmd += ["--machine", machine] if machine else []
    cmd += ["--ranks-per-node", ranks_per_node] if ranks_per_node else []
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {run.returncode}: {run.stderr.strip().splitlines()[-1:]}")
    try:
        out = json.loads(run.stdout)
    except json.JSONDecodeError as e:
        fail(f"{' '.join(cmd)}: not JSON ({e})")
    return [(c["grid"], {a: c[a] for a in ALGORITHMS}, c["predicted_us"]) for c in out["candidates"]]


def reprice(rows, plan, perfdb, machine, ranks_per_node, cache):
    """Each row's prediction by `plan` (same order as rows)."""
    out = []
    for r in rows:
        key = (plan, perfdb, machine, ranks_per_node,
               r["app"], r["width"], r["height"], r["sigma"], r["procs"], r["model"])
        if key not in cache:
            cache[key] = price_all(plan, perfdb, *key[2:])
        # The best-ranked candidate of the row's grid and algorithms prices its phase, as
        # tessera-validate's find_candidate takes it: under a CPU quota a phase's share of
        # the run's stops depends on the other phases (stretched_by_quota), elsewhere
        # every such candidate prices it alike.
        match = next((c for c in cache[key]
                      if c[0] == r["grid"] and all(not r.get(a) or c[1][a] == r[a] for a in ALGORITHMS)), None)
        if match is None:
            fail(f"{plan}: no candidate {r['grid']} {[r.get(a) for a in ALGORITHMS]} for {r['app']} "
                 f"{r['width']}x{r['height']} sigma {r['sigma']} P={r['procs']}")
        out.append(match[2][r["phase"]])
    return out


def errors(rows, predictions):
    """tessera-validate's overall figure's errors: every phase but compute (priced and
    measured apart from the pipeline's runs) and whole runs; a prediction of 0 (a phase
    the model does not price) has none."""
    return [abs(p - float(r["measured_us"])) / float(r["measured_us"]) for r, p in zip(rows, predictions)
            if r["phase"] != "compute" and p != 0]


def figures_of(rows, predictions):
    e = errors(rows, predictions)
    g = regrets(rows, predictions)
    return {"median_abs_rel_error": quantile(e, 0.5), "p90_abs_rel_error": quantile(e, 0.9),
            "mean_regret": statistics.mean(g) if g else float("nan"),
            "max_regret": max(g, default=float("nan"))}


def check_as_recorded(plan, rows, predictions, directory):
    for r, p in zip(rows, predictions):
        want = float(r["predicted_us"])
        if abs(p - want) > 1e-6 * max(abs(want), 1e-9):
            fail(f"{plan} prices {r['model']}'s {r['phase']} of {r['label']} ({r['app']} "
                 f"{r['width']}x{r['height']} sigma {r['sigma']} P={r['procs']}) at {p}, "
                 f"recorded {want} in {directory}")


def regrets(rows, predictions):
    """Per (validation, model, size, sigma): the measured whole run of the candidate the predictions
    rank first among those measured (every P, grid and algorithm), over the best measured
    (tessera-validate's regret over P, on the candidates the validation measured)."""
    runs = defaultdict(list)
    for r, p in zip(rows, predictions):
        if r["phase"] == "total":
            key = (r["_dir"], r["model"], r["width"], r["height"], r["sigma"])
            runs[key].append((p, float(r["measured_us"])))
    return [min(c)[1] / min(m for _, m in c) for c in runs.values()]


def signed_by_phase(rows, predictions):
    groups = defaultdict(list)
    for r, p in zip(rows, predictions):
        groups[(int(r["procs"]), r["phase"], int(r["width"]), int(r["height"]))].append(
            p / float(r["measured_us"]) - 1)
    return {k: (statistics.median(v), len(v)) for k, v in sorted(groups.items())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plan", action="append", required=True, help="a tessera-plan binary (repeatable)")
    ap.add_argument("--models", default="p3pc", help="comma-separated models (default p3pc), or all")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless every binary prices every observation as recorded")
    ap.add_argument("--by-phase", action="store_true", help="signed median error per P, phase and size")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    ap.add_argument("--machine", help="the machine the validations ran on, as in the databases (default: "
                    "tessera-plan's, this host's name), e.g. an emulated cluster's")
    ap.add_argument("--ranks-per-node", help="the validation job's ranks per node on a cluster (tessera-validate "
                    "prices its own placement; tessera-plan's default is a node's cores)")
    ap.add_argument("corpus", nargs="+", help="OUT_DIR:PERFDB")
    args = ap.parse_args()
    models = set(ALL_MODELS) if args.models == "all" else set(args.models.split(","))
    if not models <= set(ALL_MODELS):
        fail(f"unknown model(s) {sorted(models - set(ALL_MODELS))} (known: {', '.join(ALL_MODELS)})")
    if len(set(args.plan)) != len(args.plan):
        fail("a --plan binary is named twice")
    for plan in args.plan:
        if not os.access(plan, os.X_OK):
            fail(f"{plan}: not an executable")
    names = ["recorded"] + args.plan
    per_dir, pooled = [], {n: ([], []) for n in names}  # name -> (rows, predictions)
    cache = {}
    for item in args.corpus:
        directory, sep, perfdb = item.rpartition(":")
        if not sep or not directory:
            fail(f"'{item}': expected OUT_DIR:PERFDB")
        if not os.path.isfile(perfdb):
            fail(f"{perfdb}: no such database")
        rows = load_observations(directory, models)
        figures = {}
        for name in names:
            if name == "recorded":
                pred = [float(r["predicted_us"]) for r in rows]
            else:
                pred = reprice(rows, name, perfdb, args.machine, args.ranks_per_node, cache)
                if args.check:
                    check_as_recorded(name, rows, pred, directory)
            figures[name] = figures_of(rows, pred)
            pooled[name][0].extend(rows)
            pooled[name][1].extend(pred)
        per_dir.append({"dir": directory, "perfdb": perfdb, "observations": len(rows), "figures": figures})
    summary = {"models": sorted(models), "binaries": args.plan, "dirs": per_dir, "all": {}}
    for name in names:
        summary["all"][name] = figures_of(*pooled[name])
    if args.json:
        if args.by_phase:
            summary["by_phase"] = {
                name: [{"procs": k[0], "phase": k[1], "width": k[2], "height": k[3], "signed_median": v[0],
                        "observations": v[1]} for k, v in signed_by_phase(*pooled[name]).items()]
                for name in names}
        json.dump(summary, sys.stdout, indent=1)
        print()
        return
    label = {n: ("recorded" if n == "recorded" else f"[{i}]") for i, n in enumerate(names)}
    for i, n in enumerate(args.plan, 1):
        print(f"[{i}] {n}")
    print("%-40s %6s  " % ("validation", "obs") + "  ".join("%-31s" % label[n] for n in names))
    for d in per_dir + [{"dir": "all", "observations": len(pooled["recorded"][0]), "figures": summary["all"]}]:
        f = d["figures"]
        cells = ["%5.1f %% / %5.1f %%  %.3f / %.3f" % (
            100 * f[n]["median_abs_rel_error"], 100 * f[n]["p90_abs_rel_error"], f[n]["mean_regret"],
            f[n]["max_regret"]) for n in names]
        print("%-40s %6d  " % (d["dir"][-40:], d["observations"]) + "  ".join(cells))
    if args.by_phase:
        tables = {n: signed_by_phase(*pooled[n]) for n in names}
        print("\nsigned median error (predicted / measured - 1) per P, phase and size:")
        for k, (_, count) in tables["recorded"].items():
            print("P%-3d %-9s %5dx%-5d n=%4d  " % (k + (count,)) +
                  "  ".join("%s %+7.1f %%" % (label[n], 100 * tables[n][k][0]) for n in names))


if __name__ == "__main__":
    main()
