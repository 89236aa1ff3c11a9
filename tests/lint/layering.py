#!/usr/bin/env python3
"""Fails when the source tree breaks a layering rule of docs/design.md, or cites a file that does not exist.

    tests/lint/layering.py SOURCE_DIR      # the rules on a tree: one line per violation, exit 1 if any
    tests/lint/layering.py --self-test     # broken trees made in a scratch directory must each fail

The rules (docs/design.md, "Layering"):
  1. Every include names a header of a component the including component may use (ALLOWED below): the
     schedules never include the store or the driver, the store never the schedules, the core no level,
     adapter or tool, and so on up.
  2. A header without a `remat/` path is the file's own: found beside it or in its own target's folders
     (a target's tests, tests/X, may include target X's private headers, nobody else's).
  3. No CMakeLists.txt names another target's private folder or compiles another target's sources.
  4. Every repository path cited in a comment, a doc or a script (`levels/hdf5/src/raw_file.cpp`,
     `docs/design.md`, `remat/store/async_level.hpp`) exists.
"""
import os
import pathlib
import re
import sys
import tempfile

# Component of a file: the first matching prefix (longest first).
COMPONENTS = {
    "include/remat/schedule/": "schedule", "src/schedule/": "schedule",
    "include/remat/store/": "store", "src/store/": "store",
    "include/remat/driver/": "driver", "src/driver/": "driver",
    "include/remat/detail/": "common", "include/remat/error.hpp": "common", "include/remat/types.hpp": "common",
    "include/remat/remat.hpp": "umbrella",
    "levels/cuda/": "cuda", "levels/hdf5/": "hdf5", "levels/hdf5_internal/": "hdf5_internal",
    "solvers/dense/": "dense", "solvers/ode/": "ode", "solvers/rnn/": "rnn", "solvers/cvodes/": "cvodes",
    "solvers/mpi/": "mpi",
    "tools/report/": "report", "tools/train/": "train", "tools/cli/": "cli", "tools/stress/": "stress",
}
CORE = {"common", "schedule", "store", "driver"}
# What each component may include (its own headers always). The detail headers of include/remat/detail are
# the core's shared internals; the planners' own (multilevel_table, online_placement, revolve_task) include
# schedule headers and are for src/schedule only.
ALLOWED = {
    "common": {"schedule"},  # include/remat/detail/{multilevel_table,online_placement,revolve_task}.hpp
    "schedule": {"common"},
    "store": {"common"},
    "driver": {"common", "schedule", "store"},
    "umbrella": CORE,
    "cuda": CORE,
    "hdf5": CORE | {"hdf5_internal"},
    "hdf5_internal": CORE,
    "dense": CORE | {"cuda"},
    "ode": CORE | {"cuda", "dense"},
    "rnn": CORE | {"cuda", "dense"},
    "cvodes": CORE,
    "mpi": CORE | {"hdf5_internal"},
    "report": CORE,
    "train": CORE | {"report"},
    "cli": CORE | {"hdf5", "report"},
    "stress": CORE | {"cuda", "hdf5", "hdf5_internal", "report", "cli"},
}
# Known exceptions, each with the change that removes it.
EXCEPTIONS: set[tuple[str, str]] = set()  # none left (issue #39): add one only with the change that removes it
# The folders holding a target's headers (`remat/<name>/...` resolves in one of them).
INCLUDE_ROOTS = ["include", "levels/cuda/include", "levels/hdf5/include", "levels/hdf5_internal/include",
                 "solvers/dense/include", "solvers/ode/include", "solvers/rnn/include", "solvers/cvodes/include",
                 "solvers/mpi/include", "tools/report/include", "tools/train/include", "tools/cli/include"]
# A header's component from its include path `remat/<first>/...`.
HEADER_COMPONENT = {"schedule": "schedule", "store": "store", "driver": "driver", "detail": "common",
                    "error.hpp": "common", "types.hpp": "common", "remat.hpp": "umbrella", "cuda": "cuda",
                    "hdf5": "hdf5", "hdf5_internal": "hdf5_internal", "dense": "dense", "ode": "ode", "rnn": "rnn",
                    "cvodes": "cvodes", "mpi": "mpi", "report": "report", "train": "train", "cli": "cli"}
# Which users outside the libraries may include the internal headers of hdf5_internal.
INTERNAL_USERS = {"hdf5_internal": ("levels/hdf5/", "levels/hdf5_internal/", "solvers/mpi/", "tools/stress/",
                                    "tests/hdf5/", "tests/mpi/")}
# A test folder's target, when its name is not the component's.
TEST_TARGET = {}

# Paths of the build tree that scripts cite (programs, relative to the build directory).
BUILD_OUTPUTS = {"tools/cli/remat", "tools/stress/remat-stress", "bench/neural_ode_cuda"}

SOURCE_EXT = (".hpp", ".cpp", ".cu", ".cuh", ".h")
CITING_EXT = SOURCE_EXT + (".md", ".txt", ".cmake", ".py", ".sh", ".toml", ".yml", ".in")
TOP = ("include", "src", "levels", "solvers", "tools", "tests", "docs", "examples", "bench", "scripts", "cmake",
       "python", ".ci")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
CITED = re.compile(r'(?<![\w./$-])((?:' + "|".join(re.escape(t) for t in TOP) + r')/[\w./-]*[\w/])')
CITED_HEADER = re.compile(r'(?<![\w./-])(remat/[\w/]+\.hpp)\b')
# A line naming one of these cites that project's files (pyrevolve's src/revolve.cpp), not this repository's.
OTHER_PROJECTS = re.compile(r"pyrevolve|torchdiffeq", re.IGNORECASE)
PLACEHOLDER = re.compile(r"(^|/)[A-Z](/|_|\.|$)")  # tests/X/Y_test.cpp: a pattern, not a file
SKIP_DIRS = {".git", "build", "node_modules", "__pycache__", ".pycache", ".venv"}


def component(rel: str):
    for prefix in sorted(COMPONENTS, key=len, reverse=True):
        if rel.startswith(prefix):
            return COMPONENTS[prefix]
    return None


def target_dir(rel: str):
    """The folder of the target that owns `rel` (levels/hdf5, src/schedule, ...), or None."""
    parts = rel.split("/")
    if parts[0] in ("levels", "solvers", "tools") and len(parts) > 2:
        return "/".join(parts[:2])
    if parts[0] in ("src", "include"):
        return "core"
    return None


def files(root: pathlib.Path):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build")]
        for name in filenames:
            path = pathlib.Path(dirpath) / name
            yield path, path.relative_to(root).as_posix()


def private_headers(root: pathlib.Path) -> dict:
    """basename -> owning target folders, for the headers under a target's src/ (its private ones)."""
    owners = {}
    for path, rel in files(root):
        if rel.endswith((".hpp", ".cuh", ".h")) and "/src/" in rel and target_dir(rel):
            owners.setdefault(path.name, set()).add(target_dir(rel))
    return owners


def tested_target(rel: str):
    """For tests/X/...: the target folder X's tests may look into (levels/X, solvers/X, tools/X, core)."""
    parts = rel.split("/")
    if parts[0] != "tests" or len(parts) < 3:
        return None
    name = TEST_TARGET.get(parts[1], parts[1])
    for top in ("levels", "solvers", "tools"):
        if name in ("hdf5", "cuda") and top == "levels" or \
           name in ("dense", "ode", "rnn", "cvodes", "mpi") and top == "solvers" or \
           name in ("report", "train", "cli", "stress") and top == "tools":
            return f"{top}/{name}"
    return "core" if name in ("schedule", "store", "driver") else None


def check_includes(root: pathlib.Path, path: pathlib.Path, rel: str, text: str, owners: dict, errors: list):
    mine = component(rel)
    own_target = target_dir(rel)
    for match in INCLUDE.finditer(text):
        header = match.group(1)
        line = text.count("\n", 0, match.start()) + 1
        where = f"{rel}:{line}"
        if header.startswith("remat/"):
            first = header.split("/")[1]
            theirs = HEADER_COMPONENT.get(first)
            if theirs is None:
                continue
            users = INTERNAL_USERS.get(theirs)
            if users and not rel.startswith(users):
                errors.append(f"{where}: includes {header}, internal to {', '.join(users[:3])} (rule 1)")
            if mine is None or theirs == mine or (rel, theirs) in EXCEPTIONS:
                continue
            if theirs not in ALLOWED.get(mine, set()):
                errors.append(f"{where}: {mine} includes {header} ({theirs}); {mine} may include "
                              f"{', '.join(sorted(ALLOWED.get(mine, set()))) or 'nothing else'} (rule 1)")
        elif "/" not in header and header.endswith((".hpp", ".h", ".cuh")):
            if (path.parent / header).exists():
                continue
            if rel.startswith("tests/") and any((root / "tests").rglob(header)):
                continue  # a test helper (tests/support, or a sibling folder's, on that test's include path)
            others = owners.get(header, set()) - {own_target, tested_target(rel)}
            mine_too = owners.get(header, set()) & {own_target, tested_target(rel)}
            if others and not mine_too:
                errors.append(f"{where}: includes {header}, private to {', '.join(sorted(others))} (rule 2)")


CMAKE_PATH = re.compile(r'\$\{PROJECT_SOURCE_DIR\}/((?:src|levels|solvers|tools)/[\w/.-]+)')


def check_cmake(rel: str, text: str, errors: list):
    here = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
    tested = tested_target(rel)
    for match in CMAKE_PATH.finditer(text):
        cited = match.group(1)
        owner = target_dir(cited)
        if owner is None or (owner != "core" and here.startswith(owner + "/")) or owner == tested:
            continue
        private = "/src/" in cited + "/" or cited.endswith("/src") or cited.startswith("src/")
        if private or cited.endswith((".cpp", ".cu")):
            line = text.count("\n", 0, match.start()) + 1
            errors.append(f"{rel}:{line}: names {cited}, private to {owner} (rule 3)")


def exists(path: pathlib.Path) -> bool:
    """The file or folder, or a program's or module's source (`bench/rnn_bptt` for bench/rnn_bptt.cpp)."""
    return path.exists() or (path.parent.is_dir() and any(path.parent.glob(glob_escape(path.name) + ".*")))


def glob_escape(name: str) -> str:
    return re.sub(r"([\[\]?*])", r"[\1]", name)


def check_citations(root: pathlib.Path, rel: str, text: str, errors: list):
    for pattern, base in ((CITED, [""]), (CITED_HEADER, [r + "/" for r in INCLUDE_ROOTS])):
        for match in pattern.finditer(text):
            cited = match.group(1).rstrip(".")
            if any(c in cited for c in "*<>{}$") or "..." in cited or cited in BUILD_OUTPUTS or PLACEHOLDER.search(cited):
                continue
            if pattern is CITED and rel.endswith(SOURCE_EXT) and "#include" in text[text.rfind("\n", 0, match.start()) + 1:match.start()]:
                continue
            line_text = text[text.rfind("\n", 0, match.start()) + 1:text.find("\n", match.end())]
            if OTHER_PROJECTS.search(line_text):
                continue
            here = (root / rel).parent
            if not any(exists(root / (b + cited)) for b in base) and not (pattern is CITED and exists(here / cited)):
                line = text.count("\n", 0, match.start()) + 1
                errors.append(f"{rel}:{line}: cites {cited}, which does not exist (rule 4)")


def check(root: pathlib.Path) -> list:
    errors = []
    owners = private_headers(root)
    for path, rel in files(root):
        if rel.startswith("tests/lint/"):
            continue  # this file's own cases cite broken paths on purpose
        if not rel.endswith(CITING_EXT) and path.name != "run":
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if rel.endswith(SOURCE_EXT):
            check_includes(root, path, rel, text, owners, errors)
        if path.name == "CMakeLists.txt" or rel.endswith(".cmake"):
            check_cmake(rel, text, errors)
        check_citations(root, rel, text, errors)
    return errors


# --- self test: each broken tree must fail with its rule, the clean one must pass -----------------------
CLEAN = {
    "include/remat/types.hpp": "#pragma once\n",
    "include/remat/schedule/revolve.hpp": '#include "remat/types.hpp"\n',
    "include/remat/store/host_store.hpp": '#include "remat/types.hpp"\n',
    "include/remat/driver/run.hpp": '#include "remat/schedule/revolve.hpp"\n#include "remat/store/host_store.hpp"\n',
    "levels/hdf5/include/remat/hdf5/hdf5_store.hpp": '#include "remat/store/host_store.hpp"\n',
    "levels/hdf5/src/raw_file.hpp": "#pragma once\n",
    "levels/hdf5/src/raw_file.cpp": '#include "raw_file.hpp"\n// see levels/hdf5/src/raw_file.hpp\n',
    "levels/hdf5/CMakeLists.txt": "add_library(remat_hdf5 src/raw_file.cpp)\n",
    "tests/hdf5/raw_file_test.cpp": '#include "raw_file.hpp"\n',
    "tests/hdf5/CMakeLists.txt": "target_include_directories(t PRIVATE ${PROJECT_SOURCE_DIR}/levels/hdf5/src)\n",
    "docs/design.md": "The HDF5 level: `levels/hdf5/`, its store `remat/hdf5/hdf5_store.hpp`.\n",
}
BROKEN = {
    "schedule includes store": ("include/remat/schedule/bad.hpp", '#include "remat/store/host_store.hpp"\n', "rule 1"),
    "schedule includes driver": ("src/schedule/bad.cpp", '#include "remat/driver/run.hpp"\n', "rule 1"),
    "store includes schedule": ("src/store/bad.cpp", '#include "remat/schedule/revolve.hpp"\n', "rule 1"),
    "core includes a level": ("src/store/bad.cpp", '#include "remat/hdf5/hdf5_store.hpp"\n', "rule 1"),
    "a tool includes a level's private header": ("tools/stress/src/bad.cpp", '#include "raw_file.hpp"\n', "rule 2"),
    "a test includes another target's private header": ("tests/mpi/bad_test.cpp", '#include "raw_file.hpp"\n',
                                                        "rule 2"),
    "an adapter compiles a level's source": (
        "solvers/mpi/CMakeLists.txt", "add_library(m ${PROJECT_SOURCE_DIR}/levels/hdf5/src/raw_file.cpp)\n", "rule 3"),
    "an adapter reaches into a level's folder": (
        "solvers/mpi/CMakeLists.txt", "target_include_directories(m PRIVATE ${PROJECT_SOURCE_DIR}/levels/hdf5/src)\n",
        "rule 3"),
    "a comment cites a missing file": ("levels/hdf5/src/raw_file.cpp", "// see levels/hdf5/src/gone.cpp\n", "rule 4"),
    "a doc cites a missing header": ("docs/design.md", "`remat/hdf5/gone.hpp`\n", "rule 4"),
}


def write_tree(root: pathlib.Path, extra=None):
    tree = dict(CLEAN)
    if extra:
        tree[extra[0]] = extra[1]
    for rel, text in tree.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def self_test() -> int:
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        write_tree(pathlib.Path(scratch))
        errors = check(pathlib.Path(scratch))
        if errors:
            failures += 1
            print("self-test: the clean tree fails:\n  " + "\n  ".join(errors))
    for name, (rel, text, rule) in BROKEN.items():
        with tempfile.TemporaryDirectory() as scratch:
            write_tree(pathlib.Path(scratch), (rel, text))
            errors = check(pathlib.Path(scratch))
            if not any(rule in e and e.startswith(rel) for e in errors):
                failures += 1
                print(f"self-test: {name}: not caught ({rule}); got {errors}")
            else:
                print(f"self-test: {name}: caught: {errors[0]}")
    print(f"self-test: {len(BROKEN)} broken trees, {failures} failures")
    return 1 if failures else 0


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    if sys.argv[1] == "--self-test":
        return self_test()
    errors = check(pathlib.Path(sys.argv[1]))
    for line in errors:
        print(f"layering: {line}")
    print(f"layering: {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
