#!/usr/bin/env python3
"""Extracts every ```cpp block of README.md and docs/*.md into one C++ translation unit per page, for the
snippets_docs test to compile against the installed package (tests/snippets/README.md: the convention).

    extract_snippets.py SOURCE_DIR OUT_DIR AVAILABLE

AVAILABLE: the comma-separated parts this build has (components such as hdf5, cvodes, mpi, and "thrust" when
Thrust is found). For each page with snippets it writes OUT_DIR/<page>.cpp, its first line
"// components: a b c" naming what the page's compiled snippets need, and prints one line per page and a
summary: the snippets compiled, and every one skipped with its reason (a marked skip, or a part this build
lacks). Exits 1 on a malformed marker or an unknown prelude.
"""
import pathlib
import re
import sys

MARKER = re.compile(r"^<!--\s*snippet:(.*?)-->\s*$")
FENCE = re.compile(r"^```cpp\s*$")
INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"]([^>\"]+)[>\"]")

# What an included remat header needs from the installed package (checked in this order).
PARTS = [
    ("remat/mpi/parallel_hdf5_store", ["mpi", "mpi_hdf5"]),
    ("remat/mpi/", ["mpi"]),
    ("remat/hdf5/", ["hdf5"]),
    ("remat/cvodes/", ["cvodes"]),
    ("remat/ode/", ["ode", "thrust"]),
    ("remat/rnn/", ["rnn", "thrust"]),
    ("remat/dense/", ["dense", "thrust"]),
    ("remat/cuda/thrust_traits", ["thrust"]),
    ("remat/cuda/", ["cuda"]),
]

# The standard headers every page starts with: snippets are fragments of programs that would include them.
STANDARD = ["array", "cstddef", "cstdint", "functional", "iostream", "span", "string", "utility", "vector"]


def parts_of(include):
    for prefix, parts in PARTS:
        if include.startswith(prefix):
            return parts
    return []


def parse_marker(text, where):
    """Options of a <!-- snippet: ... --> comment: prelude=a,b  scope=namespace  skip=reason words."""
    options = {"preludes": [], "scope": "function", "skip": None}
    text = text.strip()
    skip = re.search(r"\bskip=(.*)$", text)
    if skip:
        options["skip"] = skip.group(1).strip()
        text = text[: skip.start()]
        if not options["skip"]:
            raise ValueError(f"{where}: skip= needs a reason")
    for word in text.split():
        key, _, value = word.partition("=")
        if key == "prelude" and value:
            options["preludes"] = value.split(",")
        elif key == "scope" and value in ("function", "namespace"):
            options["scope"] = value
        else:
            raise ValueError(f"{where}: unknown snippet option '{word}' (prelude=, scope=, skip=)")
    return options


def snippets(page):
    """(line of the first code line, code lines, options) for each ```cpp block of a page."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found = []
    i = 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            j = i - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            marker = MARKER.match(lines[j]) if j >= 0 else None
            options = parse_marker(marker.group(1), f"{page.name}:{j + 1}") if marker else parse_marker("", "")
            end = i + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            found.append((i + 2, lines[i + 1:end], options))
            i = end
        i += 1
    return found


def main():
    source, out, available = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), set(sys.argv[3].split(","))
    preludes = source / "tests" / "snippets" / "preludes"
    out.mkdir(parents=True, exist_ok=True)
    pages = [source / "README.md"] + sorted((source / "docs").glob("*.md"))
    compiled, skipped = 0, []
    try:
        for page in pages:
            blocks = snippets(page)
            if not blocks:
                continue
            name = page.relative_to(source).as_posix()
            needed, body, count = set(), [], 0
            for number, (line, code, options) in enumerate(blocks, 1):
                where = f"{name}:{line - 1}"
                includes = [c for c in code if INCLUDE.match(c)]
                parts = {p for c in includes for p in parts_of(INCLUDE.match(c).group(1))}
                if options["skip"]:
                    skipped.append(f"{where}: {options['skip']}")
                    continue
                missing = sorted(parts - available)
                if missing:
                    skipped.append(f"{where}: needs {', '.join(missing)}, which this build lacks")
                    continue
                needed |= parts
                count += 1
                # The snippet's own includes at file scope, before it (never seen by the snippets above it).
                body += [f'#line {line} "{name}"'] + [c if INCLUDE.match(c) else "" for c in code]
                prelude_text = []
                for p in options["preludes"]:
                    file = preludes / f"{p}.hpp"
                    if not file.is_file():
                        raise ValueError(f"{where}: no prelude {file}")
                    prelude_text += [f'#line 1 "tests/snippets/preludes/{p}.hpp"'] + \
                        file.read_text(encoding="utf-8").splitlines()
                rest = [f'#line {line} "{name}"'] + ["" if INCLUDE.match(c) else c for c in code]
                if options["scope"] == "namespace":  # declarations (specialisations of remat's templates)
                    body += prelude_text + rest
                else:
                    body += [f"namespace snippet_{number} {{"] + prelude_text + \
                        ["[[maybe_unused]] void snippet() {"] + rest + ["}", "}"]
            if count == 0:
                continue
            compiled += count
            text = [f"// components: {' '.join(sorted(needed))}",
                    f"// The {count} C++ snippets of {name}, extracted by tests/snippets/extract_snippets.py."]
            text += [f"#include <{h}>" for h in STANDARD] + body
            (out / (name.replace("/", "_").replace(".md", "") + ".cpp")).write_text("\n".join(text) + "\n")
            print(f"snippets_docs: {name}: {count} of {len(blocks)} snippets")
    except ValueError as error:
        print(f"snippets_docs: {error}", file=sys.stderr)
        return 1
    print(f"snippets_docs: {compiled} snippets compiled, {len(skipped)} skipped")
    for s in skipped:
        print(f"snippets_docs: skipped {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
