"""What the programs in bench/python share: their common options (--quick, --format, --rounds), progress
lines on stderr, interleaved timing rounds with medians, and the table or JSON they print."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Callable, Dict, List, Optional, Sequence


def summary(doc: str) -> str:
    """A program's first docstring paragraph on one line (its --help description)."""
    return " ".join(doc.split("\n\n")[0].split())


class _Parser(argparse.ArgumentParser):
    """argparse's parser, but a bad option is one line on stderr and exit 2, as the remat tool's (argparse
    prints its whole usage first)."""

    def error(self, message: str):
        print(f"{self.prog}: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def parser(description: str, full: str, quick: str) -> argparse.ArgumentParser:
    """An argument parser with the options every bench takes; `full` and `quick` describe the two sizes."""
    p = _Parser(description=description, epilog=f"full size: {full}; --quick: {quick}. Timings are "
                                "medians of interleaved rounds; progress goes to stderr.")
    p.add_argument("--quick", action="store_true", help="the small size the tests run in a few seconds")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--rounds", type=int, default=None, help="timed rounds of every configuration (interleaved)")
    p.add_argument("--threads", type=int, default=1,
                   help="PyTorch's CPU threads, OpenBLAS's too (default 1: steadier medians on a shared machine)")
    p.add_argument("--malloc", choices=("settled", "default"), default="settled",
                   help="glibc's allocator with fixed thresholds (settled, the default: a method's time then does "
                        "not depend on where its tensors land) or as the process found it")
    return p


def set_threads(args) -> None:
    """The process as every bench measures in: PyTorch's and OpenBLAS's threads (--threads) and the
    allocator (--malloc, settle_malloc)."""
    import torch

    if args.threads < 1:
        fail("--threads must be at least 1", usage=True)
    torch.set_num_threads(args.threads)
    set_openblas_threads(args.threads)
    if getattr(args, "malloc", "default") == "settled":
        args.malloc = "settled" if settle_malloc() else "default (not glibc: left as it was)"


#: glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3


def settle_malloc() -> bool:
    """glibc's malloc with fixed thresholds: blocks up to 32 MiB from the heap (not each its own mmap, zeroed
    by the kernel page by page at its first touch), the heap's top kept (not trimmed back to the kernel) and
    grown 64 MiB at a time. By default glibc moves its mmap threshold as blocks are freed and returns the heap's top to the
    kernel past 128 KiB, so that how many pages an iteration faults in (120 to 1,100 on stack_bench's hetero
    stack, varying between methods) depends on where earlier tensors landed: holding a 4 KiB tensor
    through each iteration made checkpoint_sequential's 5 segments 4.5% faster (paired medians, 60 rounds),
    settled the same within 0.7%; a method's time then depends on what it computes, not on that luck.
    False where the process's allocator is not glibc's."""
    import ctypes

    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    return all(mallopt(param, value) == 1 for param, value in ((_M_MMAP_THRESHOLD, 32 << 20),
                                                                 (_M_TRIM_THRESHOLD, 1 << 30),
                                                                 (_M_TOP_PAD, 64 << 20)))


def set_openblas_threads(threads: int) -> None:
    """OpenBLAS, which Debian's PyTorch calls for matrix products, keeps a pool of its own (a thread per core),
    which torch.set_num_threads leaves alone: on this 2-core machine "one thread" ran matrix products on
    two, and the process's CPU time then counted both (a block's profiled CPU time up to 1.7x its wall time,
    a whole iteration's wall time up to 2x the sum of its blocks' when the other core was busy). Sets that
    pool too, where the process has OpenBLAS loaded."""
    import ctypes
    import os

    for name in ("libopenblas.so.0", "libblas.so.3"):
        try:
            lib = ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)  # only a library already loaded
        except OSError:
            continue
        setter = getattr(lib, "openblas_set_num_threads", None)
        if setter is not None:
            setter(threads)


def rounds_of(args, full: int, quick: int) -> int:
    r = args.rounds if args.rounds is not None else (quick if args.quick else full)
    if r < 1:
        fail("--rounds must be at least 1", usage=True)
    return r


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def fail(message: str, usage: bool = False) -> None:
    print(f"{sys.argv[0]}: {message}", file=sys.stderr)
    sys.exit(2 if usage else 1)


def interleaved(runs: Dict[str, Callable[[], None]], rounds: int, sync: Callable[[], None] = lambda: None,
                name: str = "", cpu: Optional[Dict[str, List[float]]] = None) -> Dict[str, List[float]]:
    """Times each callable once per round, in turn (a loaded machine slows them alike), each round starting
    one callable further on (so that none is always timed right after the same one); every round's seconds
    per name. `cpu`, a dict, receives the process's CPU seconds of the same runs (which the other processes
    of a loaded machine do not add to)."""
    times: Dict[str, List[float]] = {k: [] for k in runs}
    if cpu is not None:
        cpu.update({k: [] for k in runs})
    names = list(runs)
    for r in range(rounds):
        progress(f"{name}round {r + 1} of {rounds}")
        for i in range(len(names)):
            k = names[(r + i) % len(names)]
            sync()
            start_cpu, start = time.process_time(), time.perf_counter()
            runs[k]()
            sync()
            times[k].append(time.perf_counter() - start)
            if cpu is not None:
                cpu[k].append(time.process_time() - start_cpu)
    return times


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def faster_paired(times: Sequence[float], baseline: Sequence[float]) -> float:
    """1 - the median over the rounds of a configuration's time / the baseline's in the same round (their runs
    interleaved, so that a loaded machine's slow spells fall on both): how much faster it is, the drift cancelled."""
    return 1 - median([x / y for x, y in zip(times, baseline)])


def emit(args, tables: List[Dict], extra: Dict = None) -> None:
    """Prints the tables ({"title", "columns", "rows", "notes"}) as text, or everything as one JSON object."""
    if args.format == "json":
        # how the process measured (set_threads): every report says it
        settings = {k: getattr(args, k) for k in ("threads", "malloc") if hasattr(args, k)}
        json.dump({"tables": tables, **settings, **(extra or {})}, sys.stdout, indent=1)
        print()
        return
    for t in tables:
        print(f"## {t['title']}")
        cols = t["columns"]
        cells = [[_cell(row.get(c)) for c in cols] for row in t["rows"]]
        widths = [max(len(c), *(len(r[i]) for r in cells)) if cells else len(c) for i, c in enumerate(cols)]
        print("| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |")
        print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        for r in cells:
            print("| " + " | ".join(v.ljust(w) for v, w in zip(r, widths)) + " |")
        for note in t.get("notes", []):
            print(f"- {note}")
        print()


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def device_of(name: str):
    import torch

    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        fail("--device cuda: no CUDA device is available", usage=True)
    return torch.device(name)
