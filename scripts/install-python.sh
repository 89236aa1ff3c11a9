#!/usr/bin/env bash
# Installs the Python references of the test suite and the benchmarks (JAX and diffrax; pinned in
# scripts/python-requirements.txt; rockmate's rotor solver, pinned in scripts/python-nodeps-requirements.txt
# and installed without its dependencies — bench/rotor_plan.py uses its solver alone, not its PyTorch
# front end) from PyPI into a virtual environment in the build tree:
#
#     scripts/install-python.sh [BUILD_DIR]        # default: build; makes BUILD_DIR/python-venv
#
# The environment is made with Debian's /usr/bin/python3 and --system-site-packages, so Debian's own
# Python packages (python3-torch) are visible in it too. It lives in the user's cache
# (${XDG_CACHE_HOME:-~/.cache}/remat/python-venv-HASH, HASH of the pinned lists; REMAT_PYTHON_CACHE moves it),
# and BUILD_DIR/python-venv links to it, so that a fresh clone (as CI makes) reuses it instead of installing
# again (75 s with pip's cache warm). Does nothing more when the pinned versions are installed already. Exits 1, saying why, when PyPI cannot be reached; the tests that need the references
# (label crosscheck) then fail with a message naming this script.
set -euo pipefail
case "${1:-}" in # --help prints the comment above; these scripts take no options, so any other is a usage error
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  -*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
build=${1:-build}
venv=$build/python-venv
log=$build/python-venv.log
requirements=scripts/python-requirements.txt
nodeps=scripts/python-nodeps-requirements.txt
mkdir -p "$build"
cache=${REMAT_PYTHON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remat}
shared=$cache/python-venv-$(cat "$requirements" "$nodeps" | sha256sum | cut -c1-16)
mkdir -p "$cache"
if [ -e "$venv" ] && [ ! -L "$venv" ]; then
  rm -rf "$venv" # an environment made in the build tree by an earlier version of this script
fi
ln -sfn "$shared" "$venv"
log=$shared.log
venv=$shared
if [ -f "$venv/.requirements" ] && cat "$requirements" "$nodeps" | cmp -s "$venv/.requirements" -; then
  exit 0
fi
if ! /usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "install-python: Debian's python3-venv is missing (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
echo "install-python: installing the pinned JAX and diffrax into $venv (log: $log)"
pip=("$venv/bin/pip" install --disable-pip-version-check --no-input --timeout 30 --retries 2)
if ! "${pip[@]}" -r "$requirements" > "$log" 2>&1 || ! "${pip[@]}" --no-deps -r "$nodeps" >> "$log" 2>&1; then
  tail -3 "$log" >&2
  echo "install-python: could not install the references from PyPI (is it reachable?); see $log" >&2
  exit 1
fi
cat "$requirements" "$nodeps" > "$venv/.requirements"
