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
mpirun -n "$ranks" --oversubscribe build/bin/tessera-gauss \
  --input data/chelsea.png --sigma "$sigma" --output out
echo "demo: wrote $(ls out | tr '\n' ' ')" >&2
