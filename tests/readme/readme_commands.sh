#!/usr/bin/env bash
# Runs every command README.md shows in its ```sh blocks, in order, with `build/` meaning this build
# directory, in a scratch directory; fails on the first one that fails. The quick-start scripts are left
# out: CI runs scripts/test.sh, which runs scripts/demo.sh itself; so is the Python install (see below).
#
#     tests/readme/readme_commands.sh README.md BUILD_DIR [PROGRAM_THIS_BUILD_LACKS ...]
#
# A program this build does not make (the CUDA benchmark without nvcc) may be named after BUILD_DIR; its
# command is then skipped with a message instead of failing. `mpirun [options] build/PROGRAM ...` runs the
# program under mpirun, allowed to run as root and to put more ranks than cores on this machine (OpenMPI's
# own variables, so the README shows the command as a user types it).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
set -euo pipefail
readme=$(realpath "$1")
build=$(realpath "$2")
shift 2
optional=" $* "
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# The sh blocks, with continued lines joined.
commands=$(awk '/^```sh/ { inside = 1; next } /^```/ { inside = 0 } inside' "$readme" |
           awk '/\\$/ { sub(/\\$/, ""); line = line $0; next } { print line $0; line = "" }')
count=0
while IFS= read -r command; do
  launcher=""
  case "$command" in
    "" | scripts/* | .ci/*) continue ;;
    # The Python user's install (minutes of building): scripts/install-python-package.sh makes the same
    # `pip install .` into the build's environment, whose tests have label python.
    "/usr/bin/python3 -m venv "* | ".venv/bin/pip install ."*) continue ;;
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
done <<< "$commands"
echo "readme_commands: $count commands ran"
[ "$count" -ge 20 ] # the README shows that many; fewer means the extraction broke
