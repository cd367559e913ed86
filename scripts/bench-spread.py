#!/usr/bin/env python3
"""Summarises scripts/bench-launches.sh OUT: wall time, within-run quality, across-launch
spread of the P-3PC cells, fig8-check's own spread and the agreement with it; then, for
information, the across-launch spread of the library-shaped P-3PC cells, of the local
costs (copies, mirroring, the executor's fixed costs) and of the compute kernels' rows (the
derivative pipeline, the primitive kernels), which planning prices with too."""
import csv, json, statistics, sys, os, math
d = sys.argv[1] if len(sys.argv) > 1 else "bench-launches"
def load(p):
    with open(p) as f:
        return {(r['path'], r['layout'], int(r['floats'])): float(r['time_us']) for r in csv.DictReader(f)}
def pct(v, p):
    v = sorted(v); k = max(1, math.ceil(p * len(v) - 1e-9)); return v[k - 1]
def mmm(v):
    return f"{statistics.median(v):.2f} [{min(v):.2f}–{max(v):.2f}]"
L = [i for i in (1, 2, 3) if os.path.exists(f'{d}/bench_{i}.csv')]
bench = {i: load(f'{d}/bench_{i}.csv') for i in L}
fig = {i: load(f'{d}/fig8_{i}.csv') for i in (1, 2, 3, 4) if os.path.exists(f'{d}/fig8_{i}.csv')}
walls = [float(open(f'{d}/wall_{i}.txt').read().split()[-1]) for i in L]
print("wall s per launch:", walls, "->", mmm(walls))
# Each launch's bench run as tessera-perfdb exports it (export --json), not the schema's columns.
runs = {i: next(r for r in json.load(open(f'{d}/bench_{i}.json'))['runs'] if r['tool'] == 'tessera-bench') for i in L}
qm, qp = [], []
for i in L:
    q = runs[i]['quality']
    if q is None:
        print(f"launch {i}: within-run quality not recorded (one pass)"); continue
    print(f"launch {i}: within-run quality median {100*q['median_spread']:.1f} % p90 {100*q['p90_spread']:.1f} % "
          f"cells {q['cells']} passed {int(q['passed'])}")
    qm.append(100 * q['median_spread']); qp.append(100 * q['p90_spread'])
if qm: print("within-run quality median %:", mmm(qm), " p90 %:", mmm(qp))
# Across launches: the paper sizes every launch has (1K..500K, and 0 if >= 1 us).
common = set.intersection(*(set(b) for b in bench.values()))
std = [k for k in common if k[2] in (1024, 51200, 102400, 512000)]
sp = [max(bench[i][k] for i in L) / min(bench[i][k] for i in L) - 1 for k in std]
print(f"across-launch spread over {len(std)} standard cells: median {100*statistics.median(sp):.1f} % p90 {100*pct(sp, 0.9):.1f} %")
allc = [k for k in common if min(bench[i][k] for i in L) >= 1.0]
sp2 = [max(bench[i][k] for i in L) / min(bench[i][k] for i in L) - 1 for k in allc]
print(f"across-launch spread over {len(allc)} common paper-shape cells >= 1us (refined sizes too): median {100*statistics.median(sp2):.1f} % p90 {100*pct(sp2, 0.9):.1f} %")
fsp = [max(fig[j][k] for j in fig) / min(fig[j][k] for j in fig) - 1 for k in std]
print(f"fig8-check across its {len(fig)} launches, same cells: median {100*statistics.median(fsp):.1f} % p90 {100*pct(fsp, 0.9):.1f} %")
ref = {k: statistics.median(fig[j][k] for j in fig) for k in std}
dev_med, dev_prev = [], []
for i in L:
    dv = [abs(bench[i][k] / ref[k] - 1) for k in std]
    dp = [abs(bench[i][k] / fig[i][k] - 1) for k in std]
    dev_med.append(100 * statistics.median(dv)); dev_prev.append(100 * statistics.median(dp))
    print(f"launch {i}: median cell deviation from fig8 (median of launches) {dev_med[-1]:.1f} %, from the fig8 launch just before {dev_prev[-1]:.1f} %; p90 {100*pct(dv,0.9):.1f} %")
print("agreement with fig8 (median of fig8 launches), median cell %:", mmm(dev_med))
print("agreement with the preceding fig8 launch, median cell %:", mmm(dev_prev))
for k in [('send','cc',1024), ('full','cc',51200), ('recv','cc',51200), ('full','nn',51200)]:
    print(k, "fig8:", [round(fig[j][k], 2) for j in sorted(fig)], "bench:", [round(bench[i][k], 2) for i in L])

# Not judged by issue 12's goal, but planning prices with them as well: the library-shaped
# P-3PC cells (--quick measures them in one pass) and the compute mode's local costs.
def spread_line(what, rows):
    if not rows:
        print(f"{what}: none in common"); return
    sp = sorted((max(v) / min(v) - 1, k) for k, v in rows.items())
    vals = [s for s, _ in sp]
    print(f"across-launch spread over {len(vals)} {what}: median {100*statistics.median(vals):.1f} % "
          f"p90 {100*pct(vals, 0.9):.1f} %; widest: " +
          ", ".join(f"{'/'.join(str(x) for x in k)} {100*s:.0f} %" for s, k in sp[-3:][::-1]))
def common_rows(extract):
    per = [extract(runs[i]) for i in L]
    keys = set.intersection(*(set(p) for p in per))
    return {k: [p[k] for p in per] for k in keys if min(p[k] for p in per) > 0}
spread_line("library-shaped P-3PC cells", common_rows(lambda r: {
    (s['level'], s['path'], s['layout'], s['bytes'], s['blocks'], s['block_stride_bytes']): s['median_us']
    for s in r['p3pc'] if s['blocks'] > 1 and (s['layout'] == 'cc' or s['block_stride_bytes'] > 0)}))
local_ops = ('copy', 'copy_after', 'mirror_after', 'mirror_fresh', 'mirror_fresh_after', 'phase_call', 'phase_call_after',
             'gather_results', 'first_touch', 'thread_wake')
spread_line("local-cost rows", common_rows(lambda r: {
    (c['operation'], c['taps'], c['tile_width'], c['tile_height']): c['ns_per_pixel']
    for c in r['compute'] if c['operation'] in local_ops}))
# The compute kernels' rows (the derivative pipeline and the primitive kernels, warm and
# from memory), which price the compute phase.
kernel_ops = ('derivatives', 'pixelwise', 'separable', 'neighbourhood', 'reduction', 'nms', 'local_max', 'hysteresis',
              'hysteresis_growth', 'extremum', 'count')
spread_line("compute-kernel rows", common_rows(lambda r: {
    (c['operation'], c.get('axis') or '', c['taps'], c.get('threads') or 0, c['tile_width'], c['tile_height']):
    c['ns_per_pixel'] for c in r['compute'] if c['operation'].removesuffix('_from_memory') in kernel_ops}))
