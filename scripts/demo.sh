#!/usr/bin/env bash
# The main job: install, build, then compute the Gaussian derivatives of a real
# photograph on 2 ranks. Results land in out/ (open out/*.png).
#   bash scripts/demo.sh [RANKS] [SIGMA]
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-2}
sigma=${2:-3}
bash scripts/setup.sh build
source scripts/env.sh
# First run on this machine: measure it (about 10 s), so --plan auto plans for it.
if ! build/bin/tessera-perfdb show >/dev/null 2>&1; then
  echo "demo: no performance data for this machine yet; running tessera-bench --quick" >&2
  mpirun -n 2 --oversubscribe build/bin/tessera-bench --quick --no-progress
fi
mpirun -n "$ranks" --oversubscribe build/bin/tessera-gauss \
  --input data/chelsea.png --sigma "$sigma" --output out
echo "demo: wrote $(ls out | tr '\n' ' ')" >&2
