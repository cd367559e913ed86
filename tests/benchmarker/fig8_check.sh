#!/usr/bin/env bash
# tessera-fig8-check prints SPEC's P-3PC CSV: the header, 3 paths x 4 layouts x 5 sizes,
# every time finite and the full path at size 0 equal to t_cf > 0. No timing is judged.
#   fig8_check.sh MPIEXEC BIN
set -uo pipefail
out=$(timeout 120 "$1" -n 2 --oversubscribe "$2" 5) || { echo "FAIL: exit $?"; exit 1; }
python3 - "$out" <<'PY'
import math, sys
lines = sys.argv[1].strip().splitlines()
assert lines[0] == "path,layout,floats,time_us", lines[0]
rows = [l.split(",") for l in lines[1:]]
assert len(rows) == 60, len(rows)
cells = {(p, l, int(n)) for p, l, n, _ in rows}
assert len(cells) == 60, "duplicate cells"
for p, l, n, t in rows:
    assert math.isfinite(float(t)), (p, l, n, t)
assert float(next(t for p, l, n, t in rows if (p, l, n) == ("full", "cc", "0"))) > 0
PY
