#!/usr/bin/env bash
# Packs a build's GPU programs for a machine that has a GPU but none of the build's Debian libraries:
# every CTest test labelled `gpu`, the GPU benchmarks and the CUDA-capable examples, with the shared
# libraries they load (glibc and the CUDA runtime/cuBLAS excepted: the GPU machine has its own, matching
# its driver). scripts/gpu-run.sh unpacks and runs it there.
#
#     scripts/gpu-bundle.sh build build/gpu-bundle [extra programs under build/ ...]
#
# The bundle holds programs.tar.xz (paths relative to the build directory), libs.tar.xz, tests.json (each
# test as CTest runs it: command, working directory, environment, timeout, pass/fail expressions, skip
# code) and build_dir (this build's absolute path, where gpu-run.sh unpacks the programs, so that the paths
# compiled into them and those in tests.json still hold), compressed because OpenBLAS alone is 36 MiB.
set -euo pipefail
case "${1:-}" in # --help prints the comment above; these scripts take no options, so any other is a usage error
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  -*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac

build=${1:?usage: gpu-bundle.sh BUILD_DIR OUT_DIR [programs...]}
out=${2:?usage: gpu-bundle.sh BUILD_DIR OUT_DIR [programs...]}
shift 2
build=$(cd "$build" && pwd)
rm -rf "$out" && mkdir -p "$out/lib"
out=$(cd "$out" && pwd)

# The gpu-labelled tests with the CTest properties that decide how they run and what passes (tests.json),
# and their programs, build-relative.
ctest --test-dir "$build" --show-only=json-v1 -L gpu | python3 -c '
import json, os, sys
build, out = sys.argv[1], sys.argv[2]
tests, programs = [], []
for test in json.load(sys.stdin)["tests"]:
    name = test["name"]
    if "command" not in test:
        sys.exit(f"gpu-bundle: {name} is not built (build everything first)")
    p = {property["name"]: property["value"] for property in test.get("properties", [])}
    program = test["command"][0]
    if not program.startswith(build + "/"):
        sys.exit(f"gpu-bundle: {name} runs {program}, which is not in {build}")
    programs.append(program.removeprefix(build + "/"))
    tests.append({"name": name, "command": test["command"],
                  "directory": p.get("WORKING_DIRECTORY", os.path.dirname(program)),
                  "environment": p.get("ENVIRONMENT", []), "timeout": p.get("TIMEOUT", 300),
                  "pass": p.get("PASS_REGULAR_EXPRESSION", []), "fail": p.get("FAIL_REGULAR_EXPRESSION", []),
                  "skip_code": p.get("SKIP_RETURN_CODE")})
if not tests:
    sys.exit(f"gpu-bundle: {build} has no gpu-labelled tests (configured without nvcc?)")
with open(os.path.join(out, "tests.json"), "w") as f:
    json.dump(tests, f, indent=1)
with open(os.path.join(out, "programs.txt"), "w") as f:
    f.write("".join(program + "\n" for program in programs))
' "$build" "$out"
mapfile -t programs <"$out/programs.txt"
rm "$out/programs.txt"
# (bench/neural_ode execs bench/neural_ode_cuda for --device cuda.)
for candidate in bench/cuda_offload bench/cuda_tiers bench/neural_ode bench/neural_ode_cuda bench/rnn_bptt \
    examples/neural_ode_spiral examples/rnn_adding tools/stress/remat-stress tools/cli/remat "$@"; do
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
