#!/usr/bin/env bash
# Formats every C++ and CUDA file of the project in place with the pinned clang-format (.clang-format;
# scripts/install-deps.sh installs clang-format-19).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format-19 >/dev/null || { echo "format.sh: clang-format-19 not found; run scripts/install-deps.sh" >&2; exit 1; }
git ls-files --cached --others --exclude-standard -- '*.hpp' '*.cpp' '*.cu' '*.cuh' | xargs clang-format-19 -i
