#!/usr/bin/env bash
# The Python user's install exactly as README.md shows it (its "## Python" block: a venv, then
# `pip install .` with build isolation), in a fresh clone of this repository's committed HEAD; then
# `import remat, remat.torch` from outside the clone. Minutes of building: CTest label long.
#
#     tests/readme/python_install.sh README.md SOURCE_DIR
set -euo pipefail
readme=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone --quiet "$source_dir" "$work/clone"
commands=$(awk '/^## / { python = ($0 == "## Python") } /^```sh/ { inside = python; next } /^```/ { inside = 0 }
                inside && NF' "$readme")
[ -n "$commands" ] || { echo "python_install: no sh block under '## Python' in $readme" >&2; exit 1; }
cd "$work/clone"
while IFS= read -r command; do
  echo "== $command"
  bash -c "$command" < /dev/null
done <<< "$commands"
cd "$work"
"$work/clone/.venv/bin/python" -c 'import remat, remat.torch; print("python_install: remat", remat.__version__)'
