#!/usr/bin/env bash
# Runs a bundle made by scripts/gpu-bundle.sh on a machine with a GPU: every gpu-labelled test (a test
# that skips counts as a failure here, since the point is to run it), then the commands of an optional
# file, one per line, run from the unpacked build directory (the build's own path). Logs go to REPORT_DIR.
#
#     scripts/gpu-run.sh build/gpu-bundle REPORT_DIR [COMMANDS_FILE]
#
# The CUDA runtime and cuBLAS are taken from the machine (its CUDA toolkit or its Python packages).
set -uo pipefail

bundle=$(cd "${1:?usage: gpu-run.sh BUNDLE REPORT_DIR [COMMANDS_FILE]}" && pwd)
report=${2:?usage: gpu-run.sh BUNDLE REPORT_DIR [COMMANDS_FILE]}
commands=${3:-}
mkdir -p "$report" && report=$(cd "$report" && pwd)
[[ -n $commands ]] && commands=$(cd "$(dirname "$commands")" && pwd)/$(basename "$commands")
# The programs go where they were built (tests name other programs by their absolute paths).
build=$(cat "$bundle/build_dir")
work=$(mktemp -d)
mkdir -p "$build" "$work/lib"
tar -C "$build" -xJf "$bundle/programs.tar.xz"
tar -C "$work/lib" -xJf "$bundle/libs.tar.xz"

export PATH=$PATH:/usr/local/cuda/bin
cuda_dirs=$(find /usr/local /opt /usr/lib -xdev \( -name 'libcublas.so.13' -o -name 'libcudart.so.13' \) \
    2>/dev/null | xargs -r -n1 dirname | sort -u | paste -sd:)
export LD_LIBRARY_PATH=$work/lib${cuda_dirs:+:$cuda_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    echo "CUDA libraries from: ${cuda_dirs:-none found}"
} | tee "$report/machine.txt"

failed=0
while IFS=$'\t' read -r name program arguments; do
    started=$EPOCHREALTIME
    (cd "$build/$(dirname "$program")" && timeout 300 "./$(basename "$program")" $arguments) \
        </dev/null >"$report/$name.log" 2>&1
    status=$?
    seconds=$(python3 -c "print($EPOCHREALTIME - $started)")
    verdict=passed
    ((status == 77)) && verdict=SKIPPED
    ((status != 0 && status != 77)) && verdict="FAILED (exit $status)"
    [[ $verdict != passed ]] && failed=$((failed + 1))
    printf '%-32s %s  %.1f s\n' "$name" "$verdict" "$seconds" | tee -a "$report/tests.txt"
    [[ $verdict != passed ]] && tail -20 "$report/$name.log"
done <"$bundle/tests.tsv"

if [[ -n $commands ]]; then
    while read -r line; do
        [[ -z $line || $line == \#* ]] && continue
        echo "\$ $line" | tee -a "$report/commands.txt"
        (cd "$build" && REPORT="$report" timeout 300 bash -c "$line") </dev/null >>"$report/commands.txt" 2>&1 ||
            { echo "exit $?" | tee -a "$report/commands.txt"; failed=$((failed + 1)); }
    done <"$commands"
fi
rm -rf "$work"
echo "gpu-run: $failed failed" | tee -a "$report/tests.txt"
((failed == 0))
