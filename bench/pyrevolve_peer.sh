#!/usr/bin/env bash
# Builds the peer that build/bench/schedule_speed compares remat's schedule with: pyrevolve's C++ Revolve
# (github.com/devitocodes/pyrevolve, MIT licence; Griewank, Walther and Stumm's revolve.cpp), from its own
# sources, in BUILD_DIR/bench-scratch/pyrevolve, never in this repository. Then it reconfigures BUILD_DIR with
# -DREMAT_PYREVOLVE_DIR pointing there and rebuilds schedule_speed, which from then on runs both.
#
#     bench/pyrevolve_peer.sh [BUILD_DIR]                                   # default: build
#     PYREVOLVE_SOURCE=~/src/pyrevolve bench/pyrevolve_peer.sh build        # sources already on disk
#
# Where the sources come from, the first that works:
#   1. $PYREVOLVE_SOURCE: a checkout, a git directory (bare or not; commit $PYREVOLVE_COMMIT is taken from
#      it), or pyrevolve's sdist (.tar.gz);
#   2. git clone https://github.com/devitocodes/pyrevolve, commit $PYREVOLVE_COMMIT (default d0b98c5, the one
#      docs/schedules.md measured);
#   3. pip download pyrevolve --no-deps --no-binary :all: (PyPI's latest sdist; it runs the package's build
#      requirements to read its metadata, which takes minutes).
# Only pyrevolve's include/revolve.h, src/revolve.cpp and the licence are kept. Exit 1 when no source works.
set -euo pipefail

repo_root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$(realpath -m "${1:-build}")
commit=${PYREVOLVE_COMMIT:-d0b98c5}
scratch=$build_dir/bench-scratch/pyrevolve
work=$build_dir/bench-scratch/pyrevolve-fetch

staged=$work/staged # the scratch folder is replaced only once new sources are in hand
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# Copies the three files out of a directory tree that holds pyrevolve's sources.
take_from_tree() {
    local tree=$1
    [[ -f $tree/src/revolve.cpp && -f $tree/include/revolve.h ]] || return 1
    mkdir -p "$staged/src" "$staged/include"
    cp "$tree/src/revolve.cpp" "$staged/src/"
    cp "$tree/include/revolve.h" "$staged/include/"
    cp "$tree/LICENSE" "$staged/" 2>/dev/null || true
}

peer_files=(include/revolve.h src/revolve.cpp LICENSE) # pyrevolve's, in its repository

# Extracts the files at $commit from a git directory (a mirror's bare repository or a clone).
take_from_git() {
    local git_dir=$1
    git --git-dir="$git_dir" cat-file -e "$commit^{commit}" 2>/dev/null || return 1
    git --git-dir="$git_dir" archive "$commit" "${peer_files[@]}" | tar -x -C "$work" &&
        take_from_tree "$work" && echo "pyrevolve_peer: commit $(git --git-dir="$git_dir" rev-parse --short "$commit")"
}

take_from_sdist() {
    mkdir -p "$work/extract" && tar -xzf "$1" -C "$work/extract" &&
        take_from_tree "$(find "$work/extract" -maxdepth 1 -mindepth 1 -type d | head -n 1)" &&
        echo "pyrevolve_peer: sdist $(basename "$1")"
}

found=false
if [[ -n ${PYREVOLVE_SOURCE:-} ]]; then
    src=$PYREVOLVE_SOURCE
    if [[ -f $src ]]; then
        take_from_sdist "$src" && found=true
    elif [[ -d $src/.git ]]; then
        take_from_git "$src/.git" && found=true
    elif git --git-dir="$src" rev-parse --git-dir >/dev/null 2>&1; then
        take_from_git "$src" && found=true
    else
        take_from_tree "$src" && echo "pyrevolve_peer: tree $src" && found=true
    fi
    $found || { echo "pyrevolve_peer: no pyrevolve sources (commit $commit) in PYREVOLVE_SOURCE=$src" >&2; exit 1; }
fi
if ! $found && git clone --quiet https://github.com/devitocodes/pyrevolve "$work/clone" 2>/dev/null; then
    take_from_git "$work/clone/.git" && found=true
fi
if ! $found && pip download --quiet pyrevolve --no-deps --no-binary :all: -d "$work/sdist" 2>/dev/null; then
    take_from_sdist "$(find "$work/sdist" -name "*.tar.gz" | head -n 1)" && found=true
fi
$found || { echo "pyrevolve_peer: could not fetch pyrevolve (no network? set PYREVOLVE_SOURCE)" >&2; exit 1; }
rm -rf "$scratch"
mkdir -p "$(dirname "$scratch")"
mv "$staged" "$scratch"

cmake -S "$repo_root" -B "$build_dir" -DREMAT_PYREVOLVE_DIR="$scratch" >/dev/null
cmake --build "$build_dir" --target schedule_speed
echo "pyrevolve_peer: built into $build_dir/bench/schedule_speed (sources in $scratch)"
