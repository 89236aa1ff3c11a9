"""auto_checkpoint with each block's tape of its own size (remat.torch's tape_bytes: every storage in one tape)
against the chain model's default tape (m_k + a_k, which counts a state that two neighbouring blocks save twice),
on one profile and at the same budgets: checkpoint_sequential's measured peaks on a stack of stack_bench.py. Per
budget, each plan's blocks re-run and its predicted and measured peak activation bytes.

    python bench/python/tape_bench.py [--model resnet|transformer|hetero|hvit] [--quick] [--format json]

The default tape is what the chain model read before tape_bytes existed: remat.torch._profile.tape_bytes
returns 0 (the default) while those plans are made. Blocks re-run depend on the profiled times (the planner
minimises time), so both plans of a budget share one profile."""

from __future__ import annotations

import bench_common as bc
from stack_bench import MODELS


def main():
    p = bc.parser(bc.summary(__doc__), "stack_bench.py's stack (resnet: 25 blocks, 4 images of 64x64)",
                  "its quick size (4-7 blocks)")
    p.add_argument("--model", choices=tuple(MODELS), default="resnet")
    args = p.parse_args()
    bc.rounds_of(args, 1, 1)  # one plan and one measured iteration per budget and tape: no timing
    import torch

    import remat.torch
    from remat.torch import _profile
    from remat.torch._auto import AutoCheckpoint

    bc.set_threads(args)
    model, x = MODELS[args.model](args.quick, torch.device("cpu"))
    bc.progress(f"{args.model}: profiling {len(model)} blocks")
    probe = remat.torch.auto_checkpoint(model, x, budget=1 << 60)
    bc.progress(f"{args.model}: measuring checkpoint_sequential at every segment count")
    sequential = remat.torch.tradeoff(model, x, budgets=[], rounds=1, repeats=0).sequential
    own = _profile.tape_bytes
    tapes = {"default tape": lambda profiles, k: 0, "block tapes": own}
    rows = []
    try:
        for budget in sorted({s.peak_bytes for s in sequential}):
            row = {"budget": budget}
            for name, tape in tapes.items():
                _profile.tape_bytes = tape
                fast = AutoCheckpoint(list(model), x, budget, probe.profiles, probe.plain_peak_bytes, True)
                fast(x).sum().backward()
                row.update({f"{name} re-runs": fast.recomputed_blocks, f"{name} predicted": fast.predicted_peak_bytes,
                            f"{name} measured": fast.measured_peak_bytes})
            bc.progress(f"{args.model}: budget {budget}: re-runs {row['default tape re-runs']} -> "
                        f"{row['block tapes re-runs']}")
            rows.append(row)
    finally:
        _profile.tape_bytes = own
    total = {name: sum(r[f"{name} re-runs"] for r in rows) for name in tapes}
    table = {"title": f"{args.model} stack: auto_checkpoint at checkpoint_sequential's measured peaks, one profile",
             "columns": list(rows[0]), "rows": rows,
             "notes": [f"blocks re-run over every budget: default tape {total['default tape']}, "
                       f"block tapes {total['block tapes']}"]}
    bc.emit(args, [table], {"model": args.model, "blocks": len(model), "plain_peak_bytes": probe.plain_peak_bytes,
                            "total_re_runs": total, "torch": torch.__version__})


if __name__ == "__main__":
    main()
