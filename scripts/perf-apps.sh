#!/usr/bin/env bash
# Performance of the apps (issue 11, "Performance"): tessera-edges and tessera-corners on
# 1 and 2 ranks against the OpenCV program a user would write for the same outputs
# (tessera-opencv-edges / -corners: one process, OpenCV's own threading), plus the
# chain-of-five micro-benchmark (tessera-ops-bench). Inputs are data/chelsea.png resized
# to N x N (8-bit grey PNG) in a temporary directory.
#
# Every contender is launched L times (default 3), interleaved launch by launch, so the
# drifting load of a shared machine hits all alike; every figure is the median [min–max]
# over the launches. Two times per contender:
#   end to end — the wall time of the whole command (mpirun, read, compute, write);
#   in process — OpenCV's compute_s (after reading, before writing) against
#                tessera-program-bench's scatter-to-gather time of the same program
#                (one cold run per launch on both sides).
# Peak RSS per rank comes from GNU time around each rank (scripts/rank-time.sh).
#
#   bash scripts/perf-apps.sh [--sizes "512 2048 4096"] [--launches 3] [--sigma 1] [--quick]
#   --quick: sizes 512 2048, no micro-benchmark at 2 ranks. Full table: --sizes "512 2048 4096 8192"
#   (8192 adds ~5 min on a 2-core machine).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
sizes=""
launches=3
sigma=1
quick=0
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --launches) launches=$2; shift 2 ;;
    --sigma) sigma=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n 2,21p "$0"; exit 0 ;;
    *) echo "perf-apps: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$sizes" ] || { [ $quick -eq 1 ] && sizes="512 2048" || sizes="512 2048 4096"; }
[ "$launches" -ge 1 ] || { echo "perf-apps: --launches must be >= 1" >&2; exit 2; }
bin=build/bin
for p in tessera-edges tessera-corners tessera-opencv-edges tessera-opencv-corners tessera-opencv-testimage \
         tessera-program-bench tessera-ops-bench; do
  [ -x $bin/$p ] || { echo "perf-apps: $bin/$p missing: build first" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
results=$tmp/results.jsonl
now() { date +%s.%N; }
load() { uptime | sed 's/.*load average: //'; }
echo "{\"kind\": \"load\", \"when\": \"start\", \"load\": \"$(load)\"}" >>"$results"

# One launch of an app: wall time of the whole command, peak RSS of every rank.
#   launch KIND APP N RANKS command…   (RANKS 0: a plain process)
launch() {
  local kind=$1 app=$2 n=$3 ranks=$4
  shift 4
  rm -rf "$tmp/out" "$tmp/rank".*
  local t0 t1 json=""
  t0=$(now)
  if [ "$ranks" -eq 0 ]; then
    json=$(scripts/rank-time.sh "$tmp/rank" "$@" --output "$tmp/out" 2>/dev/null)
  else
    mpirun -n "$ranks" scripts/rank-time.sh "$tmp/rank" "$@" --output "$tmp/out" >/dev/null 2>&1
  fi
  t1=$(now)
  local rss
  rss=$(cat "$tmp"/rank.* | awk '{print $2 * 1024}' | paste -sd, -)
  # Ranks in order: rank.0 first (cat sorts by name; at most 2 ranks here).
  printf '{"kind": "%s", "app": "%s", "size": %s, "ranks": %s, "wall_s": %s, "rss": [%s], "inner": %s}\n' \
    "$kind" "$app" "$n" "$ranks" "$(awk "BEGIN { printf \"%.6f\", $t1 - $t0 }")" "$rss" "${json:-null}" >>"$results"
}

# One launch of tessera-program-bench (one cold run, as the OpenCV side).
bench() {
  local app=$1 n=$2 ranks=$3
  local json
  json=$(mpirun -n "$ranks" $bin/tessera-program-bench --app "$app" --input "$tmp/in$n.png" --sigma "$sigma" \
           --runs 1 --warmup 0 2>/dev/null | tail -n 1)
  printf '{"kind": "program", "app": "%s", "size": %s, "ranks": %s, "inner": %s}\n' "$app" "$n" "$ranks" "$json" >>"$results"
}

for n in $sizes; do
  $bin/tessera-opencv-testimage data/chelsea.png "$n" "$tmp/in$n.png" 2>/dev/null
  echo "perf-apps: ${n}², $launches launches; load $(load)" >&2
  for ((l = 1; l <= launches; ++l)); do
    for app in edges corners; do
      launch opencv "$app" "$n" 0 $bin/tessera-opencv-$app --input "$tmp/in$n.png" --sigma "$sigma"
      launch tessera "$app" "$n" 1 $bin/tessera-$app --input "$tmp/in$n.png" --sigma "$sigma"
      launch tessera "$app" "$n" 2 $bin/tessera-$app --input "$tmp/in$n.png" --sigma "$sigma" --grid 1x2
      bench "$app" "$n" 1
      bench "$app" "$n" 2
    done
  done
  rm -f "$tmp/in$n.png"
  echo "{\"kind\": \"load\", \"when\": \"after ${n}\", \"load\": \"$(load)\"}" >>"$results"
done

echo "perf-apps: chain of five vs one (4096², $launches launches); load $(load)" >&2
ops_ranks="1 2"
[ $quick -eq 1 ] && ops_ranks=1
for ((l = 1; l <= launches; ++l)); do
  for r in $ops_ranks; do
    printf '{"kind": "ops", "ranks": %s, "inner": %s}\n' "$r" \
      "$(mpirun -n "$r" $bin/tessera-ops-bench --size 4096 --runs 5 2>/dev/null | tail -n 1)" >>"$results"
  done
done
echo "{\"kind\": \"load\", \"when\": \"end\", \"load\": \"$(load)\"}" >>"$results"
[ -n "${PERF_APPS_KEEP:-}" ] && cp "$results" "$PERF_APPS_KEEP"

python3 - "$results" <<'PY'
import json, sys, statistics, collections
recs = [json.loads(l) for l in open(sys.argv[1])]
def f(v, unit=1.0, digits=2):
    return f"{statistics.median(v)*unit:.{digits}f} [{min(v)*unit:.{digits}f}–{max(v)*unit:.{digits}f}]"
def ratio(a, b):  # median of a over median of b, and the range over launch pairs
    r = [x / y for x, y in zip(a, b)]
    return f"{statistics.median(a)/statistics.median(b):.2f} [{min(r):.2f}–{max(r):.2f}]"
by = collections.defaultdict(list)
for r in recs:
    if r['kind'] in ('opencv', 'tessera', 'program'):
        by[(r['app'], r['size'], r['kind'], r['ranks'])].append(r)
print("Load (uptime: 1, 5, 15 min): " + "; ".join(f"{r['when']}: {r['load']}" for r in recs if r['kind'] == 'load'))
print()
print("End to end (whole command, s) and peak RSS per rank (MiB); ratio = tessera ÷ OpenCV, [range over launch pairs]:")
print()
print("| app | image | OpenCV s | tessera -n 1 s | ratio | tessera -n 2 (1x2) s | ratio | RSS OpenCV | RSS -n 1 | RSS -n 2 (rank 0 / 1) |")
print("|---|---|---|---|---|---|---|---|---|---|")
keys = sorted({(k[0], k[1]) for k in by})
mib = lambda v: f"{v/2**20:.0f}"
for app, n in keys:
    cv = by[(app, n, 'opencv', 0)]; t1 = by[(app, n, 'tessera', 1)]; t2 = by[(app, n, 'tessera', 2)]
    w = lambda rs: [r['wall_s'] for r in rs]
    rss = lambda rs, i: [r['rss'][i] for r in rs]
    print(f"| {app} | {n}² | {f(w(cv))} | {f(w(t1))} | {ratio(w(t1), w(cv))} | {f(w(t2))} | {ratio(w(t2), w(cv))} "
          f"| {mib(max(rss(cv, 0)))} | {mib(max(rss(t1, 0)))} | {mib(max(rss(t2, 0)))} / {mib(max(rss(t2, 1)))} |")
print()
print("In process (s): OpenCV's compute (after imread, before imwrite) against tessera-program-bench (scatter to gather), one cold run per launch:")
print()
print("| app | image | OpenCV compute s | tessera 1x1 s | ratio | tessera 1x2 s | ratio | root RSS 1x1 / 1x2 MiB | beyond input + outputs, in tile images 1x1 / 1x2 |")
print("|---|---|---|---|---|---|---|---|---|")
for app, n in keys:
    cv = [r['inner']['compute_s'] for r in by[(app, n, 'opencv', 0)]]
    p1 = [r['inner']['median_s'] for r in by[(app, n, 'program', 1)]]
    p2 = [r['inner']['median_s'] for r in by[(app, n, 'program', 2)]]
    # Memory goal: root peak <= input + outputs + live intermediates of one tile. Input
    # (float) + two float outputs = 12 bytes/pixel of the whole image; what is left, in
    # float images of one tile (n²/P pixels), includes the process's fixed ~60-70 MiB.
    r1 = max(r['inner']['peak_rss_bytes'][0] for r in by[(app, n, 'program', 1)])
    r2 = max(r['inner']['peak_rss_bytes'][0] for r in by[(app, n, 'program', 2)])
    tiles = lambda rss, p: (rss - 12 * n * n) / (4 * n * n / p)
    print(f"| {app} | {n}² | {f(cv, 1, 3)} | {f(p1, 1, 3)} | {ratio(p1, cv)} | {f(p2, 1, 3)} | {ratio(p2, cv)} "
          f"| {mib(r1)} / {mib(r2)} | {tiles(r1, 1):.1f} / {tiles(r2, 2):.1f} |")
ops = [r for r in recs if r['kind'] == 'ops']
if ops:
    print()
    print(f"Chain of five pixel-wise operations vs one (in * 1.5), 4096², per launch the median of 5 runs (ms); "
          f"A = {ops[0]['inner']['chain']}, B = {ops[0]['inner']['chain_arith']}:")
    print()
    print("| ranks | one: compute | five A: compute | ratio | five B: compute | ratio | one: scatter→gather | five A | ratio | five B | ratio | cv::Mat one | cv::Mat five A | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for rk in sorted({r['ranks'] for r in ops}):
        rs = [r['inner'] for r in ops if r['ranks'] == rk]
        g = lambda key: [x[key]['median_s'] for x in rs]
        print(f"| {rk} | {f(g('one_compute'), 1e3, 1)} | {f(g('five_compute'), 1e3, 1)} | {ratio(g('five_compute'), g('one_compute'))} "
              f"| {f(g('arith_compute'), 1e3, 1)} | {ratio(g('arith_compute'), g('one_compute'))} "
              f"| {f(g('one_total'), 1e3, 1)} | {f(g('five_total'), 1e3, 1)} | {ratio(g('five_total'), g('one_total'))} "
              f"| {f(g('arith_total'), 1e3, 1)} | {ratio(g('arith_total'), g('one_total'))} "
              f"| {f(g('opencv_one'), 1e3, 1)} | {f(g('opencv_five'), 1e3, 1)} | {ratio(g('opencv_five'), g('opencv_one'))} |")
PY
