#!/usr/bin/env bash
# Quick start, part 1: installs what is missing, builds remat and runs the main demo.
set -euo pipefail
case "${1:-}" in # --help prints the comment above; these scripts take no options, so any other is a usage error
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  -*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
source scripts/build-env.sh
scripts/install-deps.sh
configure build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs" --target remat neural_ode_spiral lorenz63_gradient burgers_budget
echo
echo "== examples/neural_ode_spiral: a neural ODE learns a spiral, 1000 RK4 steps per exact gradient in 50 snapshot slots"
build/examples/neural_ode_spiral --output-dir build
echo
echo "== remat plan --steps 100000 --slots 20"
build/tools/cli/remat plan --steps 100000 --slots 20
echo
echo "== remat plan --steps 100000 --budget 2GiB --state-bytes 64MiB --format json"
build/tools/cli/remat plan --steps 100000 --budget 2GiB --state-bytes 64MiB --format json
echo
build/tools/cli/remat draw --steps 60 --slots 5 -o build/demo-schedule.svg
echo
echo "== examples/lorenz63_gradient: 10^5 RK4 steps with 20 slots"
build/examples/lorenz63_gradient
echo
echo "== examples/burgers_budget: 10^4 x 10^4 Burgers gradient within 1% of store-all's memory"
build/examples/burgers_budget
