#!/usr/bin/env bash
# Quick start, part 2: installs what is missing, builds everything and runs the whole test suite: an
# optimised build (with the benchmarks, examples and install consumers), an ASan+UBSan build, and a
# ThreadSanitizer build of the asynchronous store's tests. Prints each stage's minutes at the end.
# Compiles through ccache (scripts/build-env.sh), so a second run rebuilds only what changed.
set -euo pipefail
case "${1:-}" in # --help prints the comment above; these scripts take no options, so any other is a usage error
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  -*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
source scripts/build-env.sh
stage_timing
ctest_args=(--output-on-failure --no-tests=error -j "$jobs")
# CTest runs as many tests at once as there are cores: a BLAS that starts its own threads in each of them
# only makes them wait for each other (a README block of the RNN benchmark took 88 s of wall time for 16 s of
# CPU beside a build).
export OPENBLAS_NUM_THREADS=1

stage "dependencies (Debian packages)"
scripts/install-deps.sh

stage "optimised build"
configure build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"

stage "Python: the references and the remat package (into build/python-venv)"
# JAX, diffrax and rotor for the crosscheck tests, then `pip install .` (the Python tests, label python);
# where either fails, the tests that need it fail saying why.
scripts/install-python.sh build || echo "== install-python failed: the crosscheck tests will fail"
scripts/install-python-package.sh build || echo "== install-python-package failed: python_test will fail"

stage "optimised tests"
# Label `long` (the full property grids and the README's benchmarks at full size) is left out:
# `ctest --test-dir build -L long`.
ctest --test-dir build "${ctest_args[@]}" -LE long
# CTest names skipped tests but not why: show the GPU tests' own line from its log.
if grep -q "^skipped: no CUDA device" build/Testing/Temporary/LastTest.log; then
  echo "== GPU tests (label gpu): $(grep -m1 "^skipped: no CUDA device" build/Testing/Temporary/LastTest.log)"
fi

stage "the demo (README quick start)"
scripts/demo.sh > build/demo.log 2>&1 || { cat build/demo.log; echo "scripts/demo.sh failed"; exit 1; }
tail -3 build/demo.log

stage "ASan+UBSan build"
# The crosscheck tests against Python references run in the optimised build only.
configure build-asan -DCMAKE_BUILD_TYPE=Debug -DREMAT_SANITIZE=address,undefined \
  -DREMAT_BUILD_EXAMPLES=OFF -DREMAT_BUILD_BENCH=OFF
cmake --build build-asan -j "$jobs"

stage "ASan+UBSan tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan "${ctest_args[@]}" -LE "install|lint|crosscheck|long|compile"

stage "ThreadSanitizer build and tests (the asynchronous store)"
configure build-tsan -DCMAKE_BUILD_TYPE=Debug -DREMAT_SANITIZE=thread -DREMAT_BUILD_TOOLS=OFF \
  -DREMAT_BUILD_BENCH=OFF
tsan_tests=(store_tiered_store_test store_async_level_test)
if ctest --test-dir build-tsan -N -R '^hdf5_tiered_test$' | grep -q 'Total Tests: 1'; then
  tsan_tests+=(hdf5_tiered_test) # the disk level behind the asynchronous engine (built where HDF5 is)
fi
cmake --build build-tsan -j "$jobs" --target "${tsan_tests[@]}"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --test-dir build-tsan "${ctest_args[@]}" \
  -R "^($(IFS='|'; echo "${tsan_tests[*]}"))\$"
stage_close
echo "== all tests passed"
