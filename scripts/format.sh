#!/usr/bin/env bash
# Formats every C++ and CUDA file of the project in place with the pinned clang-format (.clang-format;
# scripts/install-deps.sh installs clang-format-19).
set -euo pipefail
case "${1:-}" in # --help prints the comment above; these scripts take no options, so any other is a usage error
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  -*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
command -v clang-format-19 >/dev/null || { echo "format.sh: clang-format-19 not found; run scripts/install-deps.sh" >&2; exit 1; }
git ls-files --cached --others --exclude-standard -- '*.hpp' '*.cpp' '*.cu' '*.cuh' | xargs clang-format-19 -i
