#!/usr/bin/env bash
# Validation on an emulated cluster where compute scales with the number of nodes
# (issue 12): K network-namespace nodes x R ranks, every node a CPU quota of F cores
# (cgroup v1) and rate-limited links. Measures the cluster once with tessera-bench
# (its own perfdb file and machine name), then runs N separate tessera-validate
# launches on it and prints the spread of every model's and baseline's figures
# (scripts/validate-spread.py). Needs root (namespaces, tc, cgroups).
#
#   scripts/cluster-validate.sh --nodes K --ranks-per-node R [--cpu F] [--cpu-period US]
#                               [--rate RATE] [--launches N] [--out DIR] [-- tessera-validate args...]
#   e.g. scripts/cluster-validate.sh --nodes 4 --ranks-per-node 1 --cpu 0.45 -- --quick
#
# Defaults: --cpu none, --cpu-period 10000 (tessera-cluster's), --rate 1gbit ("none": veth speed), --launches 3,
# --out cluster-validate-KxR[-cpuF].
# Everything the run keeps is in DIR: perfdb.sqlite, bench.err, launch-K.json / .err.
# BENCH_ARGS (default "--quick") are tessera-bench's arguments.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cluster=$root/benchmarker/cluster/tessera-cluster
bin=${BIN:-$root/build/bin}

usage() {
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
nodes="" rpn="" cpu="" period="" rate=1gbit launches=3 out=""
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) nodes=${2:?}; shift 2 ;;
    --ranks-per-node) rpn=${2:?}; shift 2 ;;
    --cpu) cpu=${2:?}; shift 2 ;;
    --cpu-period) period=${2:?}; shift 2 ;;
    --rate) rate=${2:?}; shift 2 ;;
    --launches) launches=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    *) echo "cluster-validate: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $nodes =~ ^[1-9][0-9]*$ ]] || { echo "cluster-validate: --nodes K (K >= 1) is required" >&2; exit 2; }
[[ $rpn =~ ^[1-9][0-9]*$ ]] || { echo "cluster-validate: --ranks-per-node R (R >= 1) is required" >&2; exit 2; }
[[ $launches =~ ^[1-9][0-9]*$ ]] || { echo "cluster-validate: --launches must be >= 1, got '$launches'" >&2; exit 2; }
for p in tessera-bench tessera-validate; do
  [ -x "$bin/$p" ] || { echo "cluster-validate: $bin/$p not built (bash scripts/setup.sh)" >&2; exit 1; }
done

name="emulated-${nodes}x${rpn}${cpu:+-cpu$cpu}"
out=${out:-cluster-validate-${nodes}x${rpn}${cpu:+-cpu$cpu}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
db=$out/perfdb.sqlite
up_args=(--nodes "$nodes")
[ "$rate" != none ] && up_args+=(--rate "$rate")
[ -n "$cpu" ] && up_args+=(--cpu "$cpu")
[ -n "$period" ] && up_args+=(--cpu-period "$period")

"$cluster" down >/dev/null 2>&1 || true
trap '"$cluster" down >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT TERM
"$cluster" up "${up_args[@]}" >&2

read -r -a bench_args <<<"${BENCH_ARGS:---quick}"
echo "cluster-validate: $name: tessera-bench ${bench_args[*]} -> $db" >&2
rm -f "$db"
if ! "$cluster" launch --ranks-per-node "$rpn" -- "$bin/tessera-bench" "${bench_args[@]}" --no-progress \
    --perfdb "$db" --machine "$name" 2>"$out/bench.err" >&2; then
  echo "cluster-validate: tessera-bench failed; its stderr:" >&2
  tail -20 "$out/bench.err" >&2
  exit 1
fi

files=()
for ((k = 1; k <= launches; ++k)); do
  echo "cluster-validate: $name: launch $k/$launches: tessera-validate --json $*" >&2
  if ! "$cluster" launch --ranks-per-node "$rpn" -- "$bin/tessera-validate" --json --perfdb "$db" \
      --machine "$name" --output "$out/launch-$k" "$@" >"$out/launch-$k.json.tmp" 2>"$out/launch-$k.err"; then
    echo "cluster-validate: launch $k failed; its stderr:" >&2
    tail -20 "$out/launch-$k.err" >&2
    exit 1
  fi
  mv "$out/launch-$k.json.tmp" "$out/launch-$k.json"
  files+=("$out/launch-$k.json")
done
echo "cluster-validate: $name, $launches launches ($out)" >&2
python3 "$here/validate-spread.py" "${files[@]}"
