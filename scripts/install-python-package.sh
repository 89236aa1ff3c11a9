#!/usr/bin/env bash
# Builds and installs the Python package remat (pyproject.toml: the extension over the C++ library and the
# pure-Python modules under python/remat) into the build tree's virtual environment, with what building and
# testing it needs from PyPI (pinned in scripts/python-build-requirements.txt):
#
#     scripts/install-python-package.sh [BUILD_DIR]        # default: build; uses BUILD_DIR/python-venv
#
# The environment is the one scripts/install-python.sh makes (Debian's /usr/bin/python3, with
# --system-site-packages so that Debian's python3-torch is seen); it is made the same way when missing. Run
# this after install-python.sh, which remakes the environment when its own pins change. The package is built
# without build isolation (the pinned nanobind and scikit-build-core of the environment), incrementally
# (in build/python-package) and through ccache when it is installed. The Python tests (ctest -L python) need
# it. Exits 1, saying why, when PyPI cannot be reached or the build fails.
set -euo pipefail
case "${1:-}" in # --help prints the comment above; these scripts take no options, so any other is a usage error
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  -*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
build=${1:-build}
venv=$build/python-venv
log=$build/python-package.log
requirements=scripts/python-build-requirements.txt
mkdir -p "$build"
if [ ! -x "$venv/bin/python" ]; then
  if ! /usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "install-python-package: Debian's python3-venv is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
  fi
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
pip=("$venv/bin/pip" install --disable-pip-version-check --no-input --timeout 30 --retries 2)
if ! "${pip[@]}" -r "$requirements" > "$log" 2>&1; then
  tail -3 "$log" >&2
  echo "install-python-package: could not install $requirements from PyPI (is it reachable?); see $log" >&2
  exit 1
fi
cmake_args=${CMAKE_ARGS:-}
if command -v ccache > /dev/null; then
  cmake_args="$cmake_args -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
fi
echo "install-python-package: building and installing remat into $venv (log: $log)"
if ! CMAKE_ARGS="$cmake_args" "${pip[@]}" --no-build-isolation . >> "$log" 2>&1; then
  tail -20 "$log" >&2
  echo "install-python-package: pip install . failed; see $log" >&2
  exit 1
fi
python=$(cd "$venv/bin" && pwd)/python
(cd / && "$python" -c 'import remat, sys; print("install-python-package: remat", remat.__version__, "in", sys.prefix)')
