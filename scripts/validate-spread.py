#!/usr/bin/env python3
"""The spread of tessera-validate's figures over separate launches.

    validate-spread.py [--app NAME] [--json] LAUNCH.json [LAUNCH.json ...]
                                                   (tessera-validate --json outputs)

Prints, for every model and baseline, median [min-max] over the launches of: the median
and 90th-percentile absolute relative error (models only), and the mean and maximum
regret over P (a chooser's pick among every P, grid and algorithm against the best
measured at any P), and the noise floor's regret ("split-half": the best plan by one
half of each plan's rounds, timed by the other half), over every app the launches validated, or with --app NAME over that
app's scenarios alone (gauss, edges, corners). With --json, the same as one JSON document:
{"launches": N, "files": [...], "choosers": {name: {figure: {"median", "min", "max",
"values"}}}}.
"""
import json
import statistics
import sys

# How tessera lists models and baselines (the JSON's objects are sorted by name).
ORDER = ["p3pc", "3pc", "loggp-star", "log3p", "2log23p", "loggp", "logpc", "mpi-dims", "petsc-dmda", "row-strips"]
FIGURES = [  # (key in the launch JSON, column heading, scale, unit, digits)
    ("median_abs_rel_error", "median error", 100.0, "%", 1),
    ("p90_abs_rel_error", "p90 error", 100.0, "%", 1),
    ("mean_regret", "mean regret", 1.0, "", 3),
    ("max_regret", "max regret", 1.0, "", 3),
]


def load(paths):
    launches = []
    for p in paths:
        with open(p) as f:
            try:
                s = json.load(f)
            except json.JSONDecodeError as e:
                sys.exit(f"validate-spread: {p}: not a tessera-validate --json summary ({e})")
        if "models" not in s or "baselines" not in s:
            sys.exit(f"validate-spread: {p}: no 'models' or 'baselines' (a tessera-validate --json summary?)")
        launches.append(s)
    return launches


def spread(launches):
    """{chooser: {figure key: [value of each launch]}}, models first, in launch 1's order."""
    out = {}
    for group in ("models", "baselines"):
        names = sorted(launches[0][group], key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
        for name in names:
            figures = {}
            for key, *_ in FIGURES:
                values = [s[group][name][key] for s in launches if name in s[group] and key in s[group][name]]
                if values:
                    figures[key] = values
            out[name] = figures
    # The noise floor (since the forty-sixth session): what a perfect chooser loses to the
    # measurements, the best plan by half of each plan's rounds timed by the other half.
    floors = [s["noise_floor"] for s in launches if "noise_floor" in s]
    if floors:
        out["split-half"] = {k: [f[k] for f in floors] for k in ("mean_regret", "max_regret")}
    return out


def of_app(launches, paths, app):
    """Each launch's figures for one app (its "apps" entry)."""
    out = []
    for s, p in zip(launches, paths):
        if app not in s.get("apps", {}):
            sys.exit(f"validate-spread: {p}: no figures for app '{app}'")
        out.append(s["apps"][app])
    return out


def main(argv):
    as_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    app = None
    if "--app" in argv:
        i = argv.index("--app")
        if i + 1 >= len(argv):
            sys.exit(__doc__)
        app = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    paths = argv
    if not paths:
        sys.exit(__doc__)
    launches = load(paths)
    if app:
        launches = of_app(launches, paths, app)
    table = spread(launches)
    if as_json:
        doc = {"launches": len(launches), "files": paths, "app": app, "choosers": {}}
        for name, figures in table.items():
            doc["choosers"][name] = {
                k: {"median": statistics.median(v), "min": min(v), "max": max(v), "values": v}
                for k, v in figures.items()}
        print(json.dumps(doc, indent=2))
        return
    scope = f" (app {app})" if app else ""
    print(f"tessera-validate over {len(launches)} launches{scope}: median [min-max] of each launch's figure")
    print(f"(regret over P: the chooser's pick among every P, grid and algorithm / best measured at any P)")
    print(f"{'chooser':<12}" + "".join(f"{h:>24}" for _, h, *_ in FIGURES))
    for name, figures in table.items():
        cells = []
        for key, _, scale, unit, digits in FIGURES:
            v = figures.get(key)
            if not v:
                cells.append(f"{'-':>24}")
                continue
            med, lo, hi = (scale * statistics.median(v), scale * min(v), scale * max(v))
            cells.append(f"{f'{med:.{digits}f}{unit} [{lo:.{digits}f}-{hi:.{digits}f}]':>24}")
        # Columns stay apart (two spaces at least) however wide a figure gets.
        print(f"{name:<12}" + "".join(c if c.startswith("  ") else "  " + c for c in cells))
    n = {len(v) for f in table.values() for v in f.values()}
    if n != {len(launches)}:
        print("note: some figures are missing from some launches (counts per figure: "
              + ", ".join(str(c) for c in sorted(n)) + ")")


if __name__ == "__main__":
    main(sys.argv[1:])
