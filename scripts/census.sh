#!/usr/bin/env bash
# Sizes of the planner and driver code (issue #39): every file's lines, largest first, then the functions over
# 80 lines of code (lizard's NLOC: lines that are not blank or comments) and the ten largest and most branched.
#
#   /usr/bin/python3 -m venv /tmp/lizard && /tmp/lizard/bin/pip install lizard
#   LIZARD=/tmp/lizard/bin/lizard scripts/census.sh [FOLDER...]
#
# The folders default to src/schedule, include/remat/schedule and include/remat/driver.
set -euo pipefail
case "${1:-}" in # --help prints the comment above; these scripts take no options, so any other is a usage error
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  -*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
lizard=${LIZARD:-lizard}
folders=("$@")
[ ${#folders[@]} -gt 0 ] || folders=(src/schedule include/remat/schedule include/remat/driver)
echo "== files (lines), largest first"
find "${folders[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' \) -print0 | xargs -0 wc -l | sort -rn | sed 1d
echo "== functions over 80 lines of code (NLOC CCN function file)"
"$lizard" -l cpp --csv "${folders[@]}" |
  awk -F, '{ gsub(/"/, "", $8); gsub(/"/, "", $7); if ($1 > 80) print $1, $2, $8, $7 }' | sort -rn
echo "== ten largest functions (NLOC CCN function file)"
"$lizard" -l cpp --csv "${folders[@]}" |
  awk -F, '{ gsub(/"/, "", $8); gsub(/"/, "", $7); print $1, $2, $8, $7 }' | sort -rn | head -10
echo "== ten most branched functions (CCN NLOC function file)"
"$lizard" -l cpp --csv "${folders[@]}" |
  awk -F, '{ gsub(/"/, "", $8); gsub(/"/, "", $7); print $2, $1, $8, $7 }' | sort -rn | head -10
