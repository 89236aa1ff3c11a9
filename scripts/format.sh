#!/usr/bin/env bash
# Formats every C++ and CUDA file of the project in place with clang-format (.clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files --cached --others --exclude-standard -- '*.hpp' '*.cpp' '*.cu' '*.cuh' | xargs clang-format -i
