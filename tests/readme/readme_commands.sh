#!/usr/bin/env bash
# Runs the commands README.md shows in its ```sh blocks, in order, with `build/` meaning this build
# directory, in a scratch directory; fails on the first one that fails.
#
#     tests/readme/readme_commands.sh README.md BUILD_DIR [--block N] [PROGRAM_THIS_BUILD_LACKS ...]
#     tests/readme/readme_commands.sh --blocks README.md    # "N name" for each block with a command to run
#
# CTest runs each block as a test of its own (readme_<heading>_<N>), so that the blocks run beside the
# other tests; a block's commands may build on each other (a file the first writes, the next reads). Left
# out: the quick-start scripts (CI runs scripts/test.sh, which runs scripts/demo.sh), the Python user's
# install (scripts/install-python-package.sh makes the same `pip install .` into the build's environment;
# the test readme_python_install, label long, runs the README's own lines in a fresh clone), and the
# commands another test runs exactly as shown (the list `covered` below names that test).
# A program this build does not make (the CUDA benchmark without nvcc) may be named after BUILD_DIR; its
# command is then skipped with a message instead of failing. `mpirun [options] build/PROGRAM ...` runs the
# program under mpirun, allowed to run as root and to put more ranks than cores on this machine (OpenMPI's
# own variables, so the README shows the command as a user types it).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
set -euo pipefail

# README commands that another test runs as they are, and that test.
declare -A covered=(
  ["build/examples/neural_ode_spiral"]="scripts/demo.sh (run by scripts/test.sh, with --output-dir build)"
  ["build/tools/stress/remat-stress --small --format json"]="stress_small_test"
)

# The sh blocks as "N<tab>heading<tab>command" lines, continued lines joined, comments and blanks dropped.
blocks() {
  awk '/^## / { heading = substr($0, 4) }
       /^```sh/ { inside = 1; block++; next }
       /^```/ { inside = 0 }
       inside { print block "\t" heading "\t" $0 }' "$1" |
    awk -F'\t' '/\\$/ { sub(/\\$/, "", $3); line = line $3; next } { print $1 "\t" $2 "\t" line $3; line = "" }' |
    awk -F'\t' '{ sub(/[ ]+#.*$/, "", $3); sub(/[ ]+$/, "", $3); if ($3 != "") print $1 "\t" $2 "\t" $3 }'
}

# Whether a command is one this script runs (rather than leaves out); its reason on stdout when not.
left_out() {
  case "$1" in
    scripts/* | .ci/*) echo "a quick-start script" ;;
    "/usr/bin/python3 -m venv "* | ".venv/bin/pip install ."*) echo "the Python install (readme_python_install)" ;;
    *) [ -n "${covered[$1]:-}" ] && echo "run by ${covered[$1]}" ;;
  esac
}

if [ "${1:-}" = "--blocks" ]; then # the blocks with something to run, named after their headings
  blocks "$2" | while IFS=$'\t' read -r n heading command; do
    left_out "$command" > /dev/null || echo "$n $(echo "$heading" | tr -c 'A-Za-z0-9\n' '_' | tr 'A-Z' 'a-z' |
                                             sed 's/__*/_/g; s/^_//; s/_$//')"
  done | uniq
  exit 0
fi

readme=$(realpath "$1")
build=$(realpath "$2")
shift 2
only=""
if [ "${1:-}" = "--block" ]; then
  only=$2
  shift 2
fi
optional=" $* "
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

count=0
while IFS=$'\t' read -r n heading command; do
  [ -z "$only" ] || [ "$n" = "$only" ] || continue
  launcher=""
  if reason=$(left_out "$command"); then
    echo "== left out ($reason): $command"
    continue
  fi
  case "$command" in
    build/*) ;;
    mpirun\ *\ build/*) # mpirun [options] build/PROGRAM ...: the program is the first build/ word
      launcher=${command%% build/*}
      command=build/${command#* build/} ;;
    *) echo "readme_commands: a command that does not start with build/ (or mpirun ... build/): $command" >&2
       exit 1 ;;
  esac
  program=${command%% *} # as the README writes it: build/...
  if [ ! -e "$build/${program#build/}" ] && [ "${optional#* "$program" }" != "$optional" ]; then
    echo "== skipped (not built here): ${launcher:+$launcher }$command"
    continue
  fi
  command="${launcher:+$launcher }$build/${command#build/}"
  started=$SECONDS
  if ! bash -c "$command" < /dev/null > output.txt 2>&1; then # (mpirun would read the list of commands)
    cat output.txt >&2
    echo "readme_commands: failed: $command" >&2
    exit 1
  fi
  echo "== $((SECONDS - started)) s: ${launcher:+$launcher }${command#*"$build"/}"
  count=$((count + 1))
done < <(blocks "$readme")
echo "readme_commands: $count commands ran"
if [ -n "$only" ]; then
  [ "$count" -ge 1 ] # a block CTest registered runs at least one command; none means the extraction broke
else
  [ "$count" -ge 20 ] # the README shows that many; fewer means the extraction broke
fi
