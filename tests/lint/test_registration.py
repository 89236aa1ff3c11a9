#!/usr/bin/env python3
"""Fails when a CTest test of this build has no TIMEOUT or no LABELS of its own.

    tests/lint/test_registration.py CTEST BUILD_DIR

A test without a timeout can hang CI until CI's own limit; one without a label escapes `ctest -L` selections
(CI leaves out `long`, the sanitizer stages `install|lint|crosscheck`). Reads `ctest --show-only=json-v1` over
a copy of the build's CTestTestfile.cmake files: run in the build itself, ctest would rewrite the
Testing/Temporary/LastTest.log of the run this test is part of.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile


def list_tests(ctest: str, build: str) -> list:
    with tempfile.TemporaryDirectory() as scratch:
        for testfile in pathlib.Path(build).rglob("CTestTestfile.cmake"):
            copy = pathlib.Path(scratch) / testfile.relative_to(build)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(testfile, copy)
        listing = subprocess.run([ctest, "--test-dir", scratch, "--show-only=json-v1"], check=True,
                                 capture_output=True, text=True).stdout
    return json.loads(listing)["tests"]


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    ctest, build = sys.argv[1:]
    tests = list_tests(ctest, build)
    bad = []
    for test in tests:
        properties = {p["name"]: p["value"] for p in test.get("properties", [])}
        missing = [name for name in ("TIMEOUT", "LABELS") if not properties.get(name)]
        if missing:
            bad.append(f"{test['name']}: no {' and no '.join(missing)}")
    for line in bad:
        print(f"lint_test_registration: {line}")
    print(f"lint_test_registration: {len(tests)} tests, {len(bad)} without a timeout or labels")
    return 1 if bad or len(tests) < 50 else 0  # fewer than 50 means the listing broke


if __name__ == "__main__":
    sys.exit(main())
