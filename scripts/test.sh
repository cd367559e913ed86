#!/usr/bin/env bash
# Installs, builds and runs the whole test suite (unit, MPI at several P, apps).
#   bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build
source scripts/env.sh
cd build
ctest --output-on-failure -j 2 --timeout 900
