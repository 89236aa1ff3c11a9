"""How far back each tape read of a taped plan reaches, as the driver's tape pool plays it.

    build/tools/cli/remat plan --steps 10000 --slots 693 --schedule taped --tape-units 6 --format actions |
      python3 bench/tape_reuse.py --tape-mib 0.375 --cache-mib 28 [--format json]

Reads `remat plan --format actions` on stdin. The driver (include/remat/driver/tapes.hpp) makes the plan's
peak number of tapes before step 0 and hands them out from a last-in, first-out free list: a taped advance
`advance k k+1 tape` takes the free tape on top, `reverse k` with step k's tape held reads it and puts it
back on top. For each such read this counts the distinct tapes written or read since the tape was written
(its reuse distance, in tapes). With --tape-mib and --cache-mib, it also counts the reads whose distance
in bytes is at least the cache's: under least-recently-used replacement, those come back from memory
rather than from the cache. (docs/rnn.md, "On an AMD EPYC": on that processor such reads were not what
made a plan slower.)
"""
import argparse
import json
import sys


def reuse_distances(actions):
    """The reuse distance of every tape read, in the plan's order; and the most tapes held at once."""
    taped = []  # (step, is_write) in order
    held = set()
    peak = 0
    for words in actions:
        if not words:
            continue
        if words[0] == "advance" and len(words) > 3 and words[3] == "tape":
            step = int(words[1])
            held.add(step)
            peak = max(peak, len(held))
            taped.append((step, True))
        elif words[0] == "reverse" and int(words[1]) in held:
            step = int(words[1])
            held.discard(step)
            taped.append((step, False))
    free = list(range(peak))  # made in order before step 0; the top (end) is handed out first
    owner = {}
    touches = []  # tape buffers in the order they are touched
    last_touch = {}
    distances = []
    for step, is_write in taped:
        if is_write:
            tape = free.pop()
            owner[step] = tape
        else:
            tape = owner.pop(step)
            since = set(touches[last_touch[tape] + 1 :])
            since.discard(tape)
            distances.append(len(since))
            free.append(tape)
        touches.append(tape)
        last_touch[tape] = len(touches) - 1
    return distances, peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tape-mib", type=float, default=0.0, help="one tape's size in MiB")
    parser.add_argument("--cache-mib", type=float, default=0.0, help="the cache's size in MiB")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    args = parser.parse_args()
    distances, peak = reuse_distances(line.split() for line in sys.stdin)
    if not distances:
        sys.exit("tape_reuse: the plan reads no tape (expected `remat plan --schedule taped ... --format actions`)")
    ordered = sorted(distances)
    report = {
        "tape_reads": len(distances),
        "peak_tapes": peak,
        "median_distance": ordered[len(ordered) // 2],
        "mean_distance": sum(distances) / len(distances),
        "max_distance": ordered[-1],
    }
    if args.tape_mib > 0 and args.cache_mib > 0:
        capacity = args.cache_mib / args.tape_mib
        beyond = sum(1 for d in distances if d >= capacity)
        report["cache_tapes"] = capacity
        report["reads_beyond_cache"] = beyond
        report["reads_beyond_cache_fraction"] = beyond / len(distances)
    if args.format == "json":
        json.dump(report, sys.stdout, indent=2)
        print()
        return
    line = (f"{report['tape_reads']} tape reads, {peak} tapes at the peak; reuse distance in tapes: median "
            f"{report['median_distance']}, mean {report['mean_distance']:.2f}, max {report['max_distance']}")
    if "reads_beyond_cache" in report:
        line += (f"; {report['reads_beyond_cache']} reads ({100 * report['reads_beyond_cache_fraction']:.1f}%) "
                 f"at {report['cache_tapes']:.1f} tapes ({args.cache_mib} MiB) or more")
    print(line)


if __name__ == "__main__":
    main()
