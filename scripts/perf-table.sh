#!/usr/bin/env bash
# Performance table: OpenCV's baseline (cv::sepFilter2D once per derivative, OpenCV's
# default threading, one process) against tessera on 1 and 2 ranks, in one go, for
# 512², 2048², 4096², 8192² at sigma 1, 3, 5. Prints a Markdown table of median
# times (with min–max), ratios tessera ÷ OpenCV and peak RSS per rank, plus what
# --plan auto chooses (from this machine's perfdb) when 2 ranks are started.
#   bash scripts/perf-table.sh [SIZES] [SIGMAS]     e.g.  bash scripts/perf-table.sh "512 4096" "3"
# The apps (tessera-edges, tessera-corners) against their OpenCV programs: scripts/perf-apps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
sizes=${1:-"512 2048 4096 8192"}
sigmas=${2:-"1 3 5"}
bin=build/bin
[ -x $bin/tessera-gauss ] && [ -x $bin/tessera-opencv-baseline ] || { echo "perf-table: build first (bash scripts/setup.sh)" >&2; exit 1; }
runs_for() { if [ "$1" -ge 8192 ]; then echo 5; elif [ "$1" -ge 4096 ]; then echo 7; else echo 11; fi; }
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for n in $sizes; do
  for s in $sigmas; do
    r=$(runs_for "$n")
    echo "perf-table: ${n}² sigma $s ($r runs each)" >&2
    # Interleave the three contenders so slow drifts of this noisy machine hit all alike.
    for round in 1 2; do
      printf 'opencv %s\n' "$($bin/tessera-opencv-baseline --width "$n" --height "$n" --sigma "$s" --runs "$r")" >>"$results"
      # Fixed plans (the issue's "1 rank" and "2 ranks"), then what --plan auto picks
      # when 2 ranks are started (it may leave one idle).
      printf 'tessera1 %s\n' "$(mpirun -n 1 $bin/tessera-gauss --bench "$r" --width "$n" --height "$n" --sigma "$s" --grid 1x1 2>/dev/null | tail -n 1)" >>"$results"
      printf 'tessera2 %s\n' "$(mpirun -n 2 $bin/tessera-gauss --bench "$r" --width "$n" --height "$n" --sigma "$s" --grid 1x2 2>/dev/null | tail -n 1)" >>"$results"
      printf 'auto %s\n' "$(mpirun -n 2 $bin/tessera-gauss --bench "$r" --width "$n" --height "$n" --sigma "$s" 2>/dev/null | tail -n 1)" >>"$results"
    done
  done
done
python3 - "$results" <<'PY'
import json, sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    who, js = line.split(' ', 1)
    j = json.loads(js)
    rows[(j['width'], j['sigma'], who)].append(j)
def fmt(js):
    med = statistics.median(j['median_s'] for j in js)
    lo = min(j['min_s'] for j in js); hi = max(j['max_s'] for j in js)
    return med, f"{med*1e3:.1f} ({lo*1e3:.1f}–{hi*1e3:.1f})"
print("| image | σ | OpenCV ms (min–max) | tessera 1x1 ms | ratio | tessera 1x2 ms | ratio | peak RSS per rank, 1x2 (MiB) | --plan auto on 2 ranks: plan | ms | ratio |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for (n, s) in sorted({(k[0], k[1]) for k in rows}):
    cv, cvs = fmt(rows[(n, s, 'opencv')])
    t1, t1s = fmt(rows[(n, s, 'tessera1')])
    t2, t2s = fmt(rows[(n, s, 'tessera2')])
    ta, tas = fmt(rows[(n, s, 'auto')])
    a = rows[(n, s, 'auto')][0]
    plan = f"{a['grid']} {a['scatter']}/{a['gather']}/{a['exchange']}"
    rss = max((j['peak_rss_bytes'] for j in rows[(n, s, 'tessera2')]), key=lambda v: v[0])
    print(f"| {n}² | {s:g} | {cvs} | {t1s} | {t1/cv:.2f} | {t2s} | {t2/cv:.2f} | {' / '.join(f'{v/2**20:.0f}' for v in rss)} | {plan} | {tas} | {ta/cv:.2f} |")
PY
