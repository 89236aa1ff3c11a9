#!/usr/bin/env bash
# Packs a build's GPU programs for a machine that has a GPU but none of the build's Debian libraries:
# every CTest test labelled `gpu`, the GPU benchmarks and the CUDA-capable examples, with the shared
# libraries they load (glibc and the CUDA runtime/cuBLAS excepted: the GPU machine has its own, matching
# its driver). scripts/gpu-run.sh unpacks and runs it there.
#
#     scripts/gpu-bundle.sh build build/gpu-bundle [extra programs under build/ ...]
#
# The bundle holds programs.tar.xz (paths relative to the build directory), libs.tar.xz, tests.tsv (name,
# build-relative program, arguments) and build_dir (this build's absolute path, where gpu-run.sh unpacks
# the programs, so that paths compiled into them still hold), compressed because OpenBLAS alone is 36 MiB.
set -euo pipefail

build=${1:?usage: gpu-bundle.sh BUILD_DIR OUT_DIR [programs...]}
out=${2:?usage: gpu-bundle.sh BUILD_DIR OUT_DIR [programs...]}
shift 2
build=$(cd "$build" && pwd)
rm -rf "$out" && mkdir -p "$out/lib"
out=$(cd "$out" && pwd)

# The gpu-labelled tests, as CTest would run them (the program path made relative to the build).
ctest --test-dir "$build" --show-only=json-v1 -L gpu | python3 -c '
import json, sys
build = sys.argv[1]
for test in json.load(sys.stdin)["tests"]:
    program, *arguments = test["command"]
    print("\t".join([test["name"], program.removeprefix(build + "/"), *arguments]))
' "$build" >"$out/tests.tsv"
[[ -s $out/tests.tsv ]] || { echo "gpu-bundle: $build has no gpu-labelled tests (configured without nvcc?)" >&2; exit 1; }

programs=($(cut -f2 "$out/tests.tsv"))
# (bench/neural_ode execs bench/neural_ode_cuda for --device cuda.)
for candidate in bench/cuda_offload bench/cuda_tiers bench/neural_ode bench/neural_ode_cuda bench/rnn_bptt \
    examples/neural_ode_spiral examples/rnn_adding src/stress/remat-stress src/cli/remat "$@"; do
    [[ -x $build/$candidate ]] && programs+=("$candidate")
done

# Shared libraries outside glibc and CUDA's own, resolved here.
ldd "${programs[@]/#/$build/}" 2>/dev/null | awk '/=> \// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*|libcuda|libcudart|libcublas|libcublasLt)\.so' |
    while read -r library; do cp -L "$library" "$out/lib/"; done

tar -C "$build" -cJf "$out/programs.tar.xz" "${programs[@]}"
echo "$build" >"$out/build_dir"
XZ_OPT=-T2 tar -C "$out/lib" -cJf "$out/libs.tar.xz" .
rm -rf "$out/lib"
du -sh "$out"
