#!/usr/bin/env bash
# Runs a bundle made by scripts/gpu-bundle.sh on a machine with a GPU: every gpu-labelled test as CTest
# runs it (its working directory, environment and timeout; passed by its PASS/FAIL_REGULAR_EXPRESSION where
# it has them, else by its exit status; a test that skips counts as a failure here, since the point is to
# run it), then the commands of an optional file, one per line, run from the unpacked build directory (the
# build's own path). Logs go to REPORT_DIR.
#
#     scripts/gpu-run.sh build/gpu-bundle REPORT_DIR [COMMANDS_FILE]
#
# The CUDA runtime and cuBLAS are taken from the machine (its CUDA toolkit or its Python packages).
set -uo pipefail
case "${1:-}" in # --help prints the comment above; these scripts take no options, so any other is a usage error
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  -*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac

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

# The tests (tests.json: CTest's own description of each); the exit status is the number that failed.
python3 - "$bundle/tests.json" "$report" <<'EOF'
import json, os, re, signal, subprocess, sys, time

tests, report = json.load(open(sys.argv[1])), sys.argv[2]
failed = 0
for t in tests:
    log_path = os.path.join(report, t["name"] + ".log")
    environment = dict(os.environ)
    environment.update(item.split("=", 1) for item in t["environment"])
    started = time.monotonic()
    with open(log_path, "wb") as log:
        # A session of its own, so that a timeout ends the programs the test started too.
        child = subprocess.Popen(t["command"], cwd=t["directory"], env=environment, stdin=subprocess.DEVNULL,
                                 stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            status = child.wait(timeout=t["timeout"])
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            status = None
    with open(log_path, errors="replace") as log:
        output = log.read()
    # CTest's expressions match across lines.
    matches = lambda expressions: any(re.search(e, output, re.DOTALL) for e in expressions)
    if status is None:
        verdict = f"FAILED (timeout {t['timeout']:g} s)"
    elif status == t["skip_code"]:
        verdict = "SKIPPED"
    elif matches(t["fail"]):
        verdict = "FAILED (output matches FAIL_REGULAR_EXPRESSION)"
    elif t["pass"]:
        verdict = "passed" if matches(t["pass"]) else "FAILED (output does not match PASS_REGULAR_EXPRESSION)"
    else:
        verdict = "passed" if status == 0 else f"FAILED (exit {status})"
    failed += verdict != "passed"
    line = f"{t['name']:<32} {verdict}  {time.monotonic() - started:.1f} s"
    print(line, flush=True)
    with open(os.path.join(report, "tests.txt"), "a") as summary:
        print(line, file=summary)
    if verdict != "passed":
        print("".join(output.splitlines(keepends=True)[-20:]), end="", flush=True)
sys.exit(min(failed, 100))
EOF
failed=$?

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
