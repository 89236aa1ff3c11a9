#!/usr/bin/env bash
# Checksums every plan of a fixed grid, to show that a change to the planners leaves every plan's actions
# byte-identical (issue #39: planners split by idea).
#
#   scripts/plan-grid.sh build/tools/cli/remat > before.txt     # on the unchanged code
#   scripts/plan-grid.sh build/tools/cli/remat > after.txt      # on the change
#   diff before.txt after.txt                                   # empty: no plan changed
#
# One line per case: its name, then the sha256 of `remat plan ... --format actions` (stdout and stderr, then
# the exit status, so a refusal that changes is a difference too). The grid: revolve, uniform, online, taped
# (every T from 1 to 300 at a few slot counts), multilevel (2, 3 and 4 levels, unlimited last levels, exact and
# near-optimal; every T from 1 to 300), heterogeneous chains (random chains drawn with fixed seeds, plus
# non-persistent, taped-advance, coarse-granularity, short-horizon and blocked variants) and a few large T.
# The chains are written by the Python below (the same seeds give the same files on any machine).
# Runs JOBS cases at a time (default 2); about 3 minutes with 2 jobs on a loaded 2-core machine.
set -euo pipefail
case "${1:-}" in # --help prints the comment above; these scripts take no options, so any other is a usage error
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  -*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac
remat=$(realpath "${1:?usage: scripts/plan-grid.sh PATH/TO/remat}")
jobs=${JOBS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 - "$work" > "$work/cases" <<'EOF'
import json, random, sys
work = sys.argv[1]
cases = []
def case(name, args):
    cases.append(f"{name}|{args}")

for t in range(1, 301):
    for s in (1, 2, 3, 5, 9):
        case(f"revolve T={t} s={s}", f"-T {t} -s {s}")
    for s in (2, 5):
        case(f"uniform T={t} s={s}", f"-T {t} -s {s} --schedule uniform")
    for s in (2, 4):
        case(f"online T={t} s={s}", f"-T {t} -s {s} --online")
    case(f"taped T={t} s=4 tape=1", f"-T {t} -s 4 --schedule taped --tape-units 1")
    case(f"taped T={t} s=7 tape=2", f"-T {t} -s 7 --schedule taped --tape-units 2")
    case(f"multilevel2 T={t}", f"-T {t} --level host:3 --level disk:inf:4:4")
    case(f"multilevel3 T={t}", f"-T {t} --level host:2 --level ssd:5:1:2 --level disk:inf:6:6")
    case(f"multilevel4 T={t}", f"-T {t} --level l1:2 --level l2:3:1:1 --level l3:6:2:3 --level disk:20:8:8")
    case(f"multilevel3-limited T={t}", f"-T {t} --level host:2 --level ssd:4:1:1 --level disk:9:3:5")
    if t % 7 == 0:
        case(f"multilevel2-near T={t}", f"-T {t} --level host:3 --level disk:inf:4:4 --method near-optimal")
        case(f"multilevel3-exact T={t}",
             f"-T {t} --level host:2 --level ssd:5:1:2 --level disk:inf:6:6 --method exact")
        case(f"store-all T={t}", f"-T {t} --schedule store-all")
        case(f"checkpoint-sequential T={t}",
             f"-T {t} -s 6 --schedule checkpoint-sequential --tape-units 2")

# Large T: the output is long, its checksum is not.
case("revolve T=1e5 s=20", "-T 100000 -s 20")
case("revolve T=1e6 s=50", "-T 1000000 -s 50")
case("uniform T=1e6 s=100", "-T 1000000 -s 100 --schedule uniform")
case("online T=1e5 s=10", "-T 100000 -s 10 --online")
case("taped T=1e4 s=20 tape=3", "-T 10000 -s 20 --schedule taped --tape-units 3")
case("multilevel2 T=1e5", "-T 100000 --level host:10 --level disk:inf:5:5")
case("multilevel3 T=1e6", "-T 1000000 --level host:10 --level ssd:100:2:2 --level disk:inf:10:10")
case("multilevel4 T=1e6",
     "-T 1000000 --level l1:4 --level l2:20:1:1 --level l3:100:3:3 --level disk:inf:10:10")
case("multilevel3 T=5000 exact", "-T 5000 --level host:4 --level ssd:30:1:1 --level disk:inf:8:8 --method exact")

def chain(name, steps, seed, narrow=False):
    rng = random.Random(seed)
    unit = 1024
    sizes = [rng.randint(1, 8 if narrow else 64) * unit for _ in range(steps + 1)]
    doc = {"steps": [{"forward": round(rng.uniform(0.5, 4.0), 3), "adjoint": round(rng.uniform(0.5, 6.0), 3),
                      "state_bytes": sizes[k], "adjoint_bytes": rng.randint(0, 16) * unit}
                     for k in range(steps)],
           "final_state_bytes": sizes[steps]}
    path = f"{work}/{name}.json"
    with open(path, "w") as f:
        json.dump(doc, f)
    need = max(max(sizes[k], sizes[k + 1]) + doc["steps"][k]["adjoint_bytes"] for k in range(steps))
    return path, need, sum(sizes)

for steps in list(range(1, 13)) + [20, 35, 60, 100, 200, 400]:
    for seed in (1, 2, 3):
        path, need, total = chain(f"chain-{steps}-{seed}", steps, 1000 * steps + seed)
        for frac in (0.0, 0.1, 0.3, 1.0):
            budget = need + int(frac * total)
            name = f"chain T={steps} seed={seed} budget={frac}"
            case(name, f"--chain {path} --budget {budget}")
            if steps <= 60:
                case(name + " taped-advances", f"--chain {path} --budget {budget} --taped-advances")
            if steps <= 12:
                case(name + " non-persistent", f"--chain {path} --budget {budget} --non-persistent")
            if steps >= 20:
                case(name + " granularity=4KiB", f"--chain {path} --budget {budget} --granularity 4096")
                case(name + " horizon=5", f"--chain {path} --budget {budget} --horizon 5")
                case(name + " horizon=5 no-greedy",
                     f"--chain {path} --budget {budget} --horizon 5 --no-greedy-fallback")
for steps, seed in ((3000, 7), (20000, 8)):
    path, need, total = chain(f"chain-long-{steps}", steps, seed, narrow=True)
    for frac in (0.02, 0.1):
        case(f"chain T={steps} seed={seed} budget={frac}", f"--chain {path} --budget {need + int(frac * total)}")
print("\n".join(cases))
EOF

run_case() {
  local name=${1%%|*} args=${1#*|} sum
  # shellcheck disable=SC2086 # the arguments are split on purpose
  sum=$({ "$remat" plan $args --format actions 2>&1; echo "exit $?"; } | sha256sum)
  printf '%s  %s\n' "${sum%% *}" "$name"
}
export -f run_case
export remat
tr '\n' '\0' < "$work/cases" | xargs -0 -P "$jobs" -n 1 bash -c 'run_case "$1"' _ | LC_ALL=C sort -k2
