#!/usr/bin/env python3
"""Prices the apps' (edges, corners) measured compute and whole runs of tessera-validate
launches again, on one or more databases: an A/B of what a database holds (e.g. with and
without some of its rows) on one fixed set of measurements.

    reprice-apps.py [--plan TESSERA_PLAN] [--check] --perfdb DB [--perfdb DB ...] OUT_DIR [OUT_DIR ...]

OUT_DIR is a `tessera-validate --output` directory (its observations.csv); several (the
launches of scripts/validate-launches.sh) are pooled, each observation's measurement the
median over them. For every (app, size, sigma, P) `tessera-plan --app APP --procs P --top 0
--json` prices every candidate on each database (edges' hysteresis at 2 rounds on one rank
and 3 on several, as tessera-validate prices it), and each observation gets the candidate
of its grid (compute) or of its grid and algorithms (total). Compute is compared as the
plan's compute + reduce: tessera-validate also times the exchanges inside edges' hysteresis
loop as compute (tens of µs), which this leaves out.

With --check, exits 1 (naming the first that differs beyond 1e-6 relative) unless the
first database prices every total observation as the launch recorded it (p3pc's
predicted_us): run on the database the launches validated, tessera-plan's whole-run
prices of the apps must be tessera-validate's.

Prints per database and phase the count, the median and 90th-percentile |predicted -
measured| / measured and the signed median. scripts/validate-reprice.py does the same for
gauss with several binaries.

Example (the fifty-seventh session: a database with and without its from-memory rows):
    cp DB warm.sqlite
    sqlite3 warm.sqlite "delete from compute_costs where operation like '%_from_memory'"
    scripts/reprice-apps.py --perfdb warm.sqlite --perfdb DB OUT/launch-1 OUT/launch-2 OUT/launch-3
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys


def fail(message):
    print("reprice-apps: " + message, file=sys.stderr)
    sys.exit(2)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plan", default=os.path.join(here, "..", "build", "bin", "tessera-plan"),
                    help="tessera-plan binary (default build/bin/tessera-plan)")
    ap.add_argument("--perfdb", action="append", required=True, help="database to price with (repeatable)")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless the first database prices every total as recorded")
    ap.add_argument("out_dirs", nargs="+", metavar="OUT_DIR", help="tessera-validate output directories")
    args = ap.parse_args()
    if not os.access(args.plan, os.X_OK):
        fail("no tessera-plan at " + args.plan)
    for db in args.perfdb:
        if not os.path.isfile(db):
            fail("no database " + db)

    measured = {}
    recorded = []  # (key, the launch's p3pc prediction) of every total observation
    for d in args.out_dirs:
        path = os.path.join(d, "observations.csv")
        if not os.path.isfile(path):
            fail("no observations.csv in " + d)
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                # Every model's row carries the same measurement: take one model's.
                if r.get("app") not in ("edges", "corners") or r["model"] != "p3pc":
                    continue
                if r["phase"] not in ("compute", "total"):
                    continue
                key = (r["app"], int(r["width"]), int(r["height"]), float(r["sigma"]), int(r["procs"]),
                       r["phase"], r["grid"], r["scatter"], r["gather"], r["exchange"])
                measured.setdefault(key, []).append(float(r["measured_us"]))
                if r["phase"] == "total":
                    recorded.append((key, float(r["predicted_us"])))
    if not measured:
        fail("no edges or corners observations in " + ", ".join(args.out_dirs))

    priced = {}

    def candidates(db, app, w, h, sigma, procs):
        k = (db, app, w, h, sigma, procs)
        if k not in priced:
            cmd = [args.plan, "--app", app, "--width", str(w), "--height", str(h), "--sigma", repr(sigma),
                   "--procs", str(procs), "--perfdb", db, "--json", "--top", "0"]
            if app == "edges":
                cmd += ["--hysteresis-rounds", "2" if procs == 1 else "3"]
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode != 0:
                last = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "no message"
                fail("tessera-plan failed (" + " ".join(cmd) + "): " + last)
            priced[k] = json.loads(run.stdout)["candidates"]
        return priced[k]

    def price(db, key):
        app, w, h, sigma, procs, phase, grid, scatter, gather, exchange = key
        for c in candidates(db, app, w, h, sigma, procs):
            if c["grid"] != grid:
                continue
            if phase == "compute":
                return c["predicted_us"]["compute"] + c["predicted_us"].get("reduce", 0.0)
            if (c["scatter"], c["gather"], c["exchange"]) == (scatter, gather, exchange):
                return c["predicted_us"]["total"]
        return None

    if args.check:
        for key, want in recorded:
            got = price(args.perfdb[0], key)
            if got is None or abs(got - want) > 1e-6 * max(1.0, abs(want)):
                print("reprice-apps: %s %dx%d sigma %g P=%d %s %s/%s/%s: recorded %.6f, tessera-plan %s" %
                      (key[0], key[1], key[2], key[3], key[4], key[6], key[7], key[8], key[9], want,
                       "none" if got is None else "%.6f" % got), file=sys.stderr)
                sys.exit(1)

    for db in args.perfdb:
        errors = {"compute": [], "total": []}
        for key, values in sorted(measured.items()):
            phase = key[5]
            m = statistics.median(values)
            p = price(db, key)
            if p is not None and m > 0:
                errors[phase].append((p - m) / m)
        for phase in ("compute", "total"):
            e = errors[phase]
            if not e:
                print("%s %s: no observation priced" % (db, phase))
                continue
            a = sorted(abs(x) for x in e)
            print("%s %-7s n %3d  median |error| %5.1f %%  p90 %5.1f %%  signed median %+6.1f %%" %
                  (db, phase, len(e), 100 * statistics.median(a), 100 * a[min(len(a) - 1, int(0.9 * len(a)))],
                   100 * statistics.median(e)))


if __name__ == "__main__":
    main()
