"""auto_checkpoint against plain autograd and torch.utils.checkpoint.checkpoint_sequential on four stacks of
24-27 blocks: time per iteration (forward and backward, median of interleaved rounds) and measured peak
activation bytes.

    python bench/python/stack_bench.py [--model transformer|hetero|resnet|hvit|both|all] [--quick]
                                       [--format json] [--rounds N] [--device cpu|cuda] [--svg DIR]
                                       [--reach-parameters yes|no]

The stacks: "transformer", 24 nn.TransformerEncoderLayer (d_model 64, 4 heads, feed-forward 256) on a batch of 2
sequences of 32; "hetero", 24 blocks over four widths (32, 96, 48, 128): per width two attention blocks
(nn.TransformerEncoderLayer with a feed-forward as narrow as the width), residual MLP blocks expanding 8x, 2x and
4x, and a projection to the next width, on a batch of 2 sequences of 32; "resnet", 25 convolutional blocks as in
ResNet (a stem, then four stages of 8, 16, 32 and 64 channels, each five residual blocks of two 3x3 convolutions
with batch norm and a strided convolution that halves the resolution to the next; 64x64 images, batch 4): its
memory is in its first blocks (each stage holds a quarter of the previous one's bytes for about the same compute),
the kind of stack checkpoint_sequential's equal segments fit worst; "hvit", 27 blocks of a hierarchical vision
transformer in Swin-T's proportions (four stages of 2, 2, 6 and 2 layers at widths 48, 96, 192 and 384, head width
24, each layer a residual global self-attention block and a residual MLP block expanding 4x, each stage's 16x16,
8x8, 4x4 and 2x2 grid of tokens made from the one before by a 2x2 patch merge; 4 images of 64x64 as 4x4 patches,
0.13-0.2 s of CPU per iteration on one thread): the heterogeneous stack at realistic proportions, where an
attention block's scores (tokens^2 x heads) and the wide MLPs' activations differ in cost and bytes from block to
block and from stage to stage (a stage's layers hold a third to a half of the previous stage's bytes, the
attention scores an eighth; its MLP blocks cost about as much). "hetero" is the heterogeneous stack of the first
figures (small: its costs are mostly per-operation overhead and its blocks differ little), kept as it was so that
they can be reproduced. --quick: 4 to 7 narrow blocks on a tiny batch.

Measured with remat.torch.tradeoff (docs/python.md): peak activation bytes through saved-tensor hooks (what
autograd saves, each storage once, plus the snapshots auto_checkpoint holds; parameters and gradients not
counted), the same rule for every method; checkpoint_sequential at every segment count, auto_checkpoint at
the budgets those reach (each one's measured peak) and plain autograd's. The input requires grad, so every
method also computes its gradient (reentrant checkpoint would otherwise skip the first segment's parameters).
auto_checkpoint runs with reach_parameters=False unless --reach-parameters yes: as checkpoint_sequential's
reentrant checkpoint (torch 1.13's only form for it), its autograd node then does not take the parameters, so
torch.autograd.grad cannot reach them through it (loss.backward(), which the bench times, adds to every .grad
the same); the last table times the runtime both ways on the segments' own schedule, which prices that reach.

Times: the median over interleaved rounds of the wall time (what the goals name), and the least over the rounds
of the process's CPU time (the other processes' turns do not count in it, and the least round is the one
least disturbed by what still does, e.g. time stolen from the VM); and, comparing two methods, the median
over the rounds of their ratio within a round ("paired", wall and CPU: the two run one after the other in
each round, so that a loaded machine's slow spells, which move the medians of each by 10-40%, fall on
both); PyTorch and OpenBLAS run one thread unless --threads says more.

Goals (issue #38): at equal or lower measured peak, auto_checkpoint never slower than checkpoint_sequential,
>= 10% faster on the heterogeneous stack; at plain autograd's peak, within 3% of plain autograd's time. Beside
each segment count, the most any schedule within the segments' measured peak can gain on them as the blocks'
profile prices it (a lower bound on any schedule's cost: gain_bound), what the profile prices auto_checkpoint's
plan faster by (its module's own predicted cost against the segments' schedule's, both under the chain model
on the profile tradeoff planned the modules from: segments_priced), and the segments' peak as the chain model
auto_checkpoint plans with prices their schedule (written as remat actions: segments_actions).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as bc  # noqa: E402


def transformer(quick: bool, device):
    import torch

    d, heads, ff, layers, batch, seq = (32, 2, 64, 4, 2, 8) if quick else (64, 4, 256, 24, 2, 32)
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.TransformerEncoderLayer(d, heads, dim_feedforward=ff, dropout=0.0,
                                                                   batch_first=True) for _ in range(layers)])
    return model.to(device), torch.randn(batch, seq, d, device=device)


def hetero(quick: bool, device):
    import torch
    from torch import nn

    class MLP(nn.Module):
        """A residual MLP block expanding the width `expand` times: large activations for its compute."""

        def __init__(self, d, expand):
            super().__init__()
            self.norm, self.up, self.down = nn.LayerNorm(d), nn.Linear(d, expand * d), nn.Linear(expand * d, d)

        def forward(self, x):
            return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    widths, batch, seq = ((16, 48, 24), 2, 8) if quick else ((32, 96, 48, 128), 2, 32)
    torch.manual_seed(0)
    blocks = []
    for i, d in enumerate(widths):
        blocks += [nn.TransformerEncoderLayer(d, 4 if d % 4 == 0 else 2, dim_feedforward=d, dropout=0.0,
                                              batch_first=True), MLP(d, 8)]
        if not quick:
            blocks += [MLP(d, 2), nn.TransformerEncoderLayer(d, 4, dim_feedforward=d, dropout=0.0, batch_first=True),
                       MLP(d, 4)]
        if i + 1 < len(widths):
            blocks.append(nn.Linear(d, widths[i + 1]))
    if not quick:
        blocks.append(nn.Linear(widths[-1], widths[0]))
    return nn.Sequential(*blocks).to(device), torch.randn(batch, seq, widths[0], device=device)


def hvit(quick: bool, device):
    """A hierarchical vision transformer in Swin-T's proportions: four stages of depths 2, 2, 6 and 2 on a
    grid of patch tokens, each stage's width twice the one before and its grid a quarter (a 2x2 patch
    merge), every transformer layer split into its two residual blocks (global self-attention, an MLP
    expanding 4x), so that attention (cost and saved bytes ~ tokens^2) and MLP blocks, and the stages'
    sizes, differ as they do in such a network."""
    import torch
    from torch import nn

    class Attention(nn.Module):
        """A pre-norm residual self-attention block (all tokens of the grid: its scores are tokens^2 x heads)."""

        def __init__(self, d, heads):
            super().__init__()
            self.norm, self.attn = nn.LayerNorm(d), nn.MultiheadAttention(d, heads, batch_first=True)

        def forward(self, x):
            y = self.norm(x)
            return x + self.attn(y, y, y, need_weights=False)[0]

    class MLP(nn.Module):
        """A pre-norm residual MLP block expanding the width 4x (GELU)."""

        def __init__(self, d):
            super().__init__()
            self.norm, self.up, self.down = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    class Merge(nn.Module):
        """Swin's patch merging: each 2x2 group of tokens of the (side x side) grid concatenated (4d), normed and
        projected to the next stage's width: a quarter of the tokens."""

        def __init__(self, d, d_next, side):
            super().__init__()
            self.side, self.norm, self.proj = side, nn.LayerNorm(4 * d), nn.Linear(4 * d, d_next, bias=False)

        def forward(self, x):
            b, _, d = x.shape
            h = self.side // 2
            x = x.reshape(b, h, 2, h, 2, d).permute(0, 1, 3, 2, 4, 5).reshape(b, h * h, 4 * d)
            return self.proj(self.norm(x))

    # (width, heads, layers) per stage; head width 24 (8 in --quick)
    stages, batch, side = (((8, 1, 1), (16, 2, 1)), 1, 4) if quick else \
        (((48, 2, 2), (96, 4, 2), (192, 8, 6), (384, 16, 2)), 4, 16)
    torch.manual_seed(0)
    blocks, s = [], side
    for i, (d, heads, layers) in enumerate(stages):
        for _ in range(layers):
            blocks += [Attention(d, heads), MLP(d)]
        if i + 1 < len(stages):
            blocks.append(Merge(d, stages[i + 1][0], s))
            s //= 2
    return nn.Sequential(*blocks).to(device), torch.randn(batch, side * side, stages[0][0], device=device)


def resnet(quick: bool, device):
    import torch
    from torch import nn

    class Residual(nn.Module):
        """ResNet's basic block: two 3x3 convolutions with batch norm, the input added back."""

        def __init__(self, c):
            super().__init__()
            self.a, self.b = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.norm_a, self.norm_b = nn.BatchNorm2d(c), nn.BatchNorm2d(c)

        def forward(self, x):
            return torch.relu(x + self.norm_b(self.b(torch.relu(self.norm_a(self.a(x))))))

    def conv(c_in, c_out, stride):
        return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(c_out),
                             nn.ReLU())

    channels, per_stage, batch, size = ((4, 8), 2, 2, 16) if quick else ((8, 16, 32, 64), 5, 4, 64)
    torch.manual_seed(0)
    blocks = [conv(3, channels[0], 1)]
    for i, c in enumerate(channels):
        blocks += [Residual(c) for _ in range(per_stage)]
        if i + 1 < len(channels):
            blocks.append(conv(c, channels[i + 1], 2))  # half the resolution, twice the channels
    blocks.append(conv(channels[-1], channels[-1], 1))
    return nn.Sequential(*blocks).to(device), torch.randn(batch, 3, size, size, device=device)


MODELS = {"transformer": transformer, "hetero": hetero, "resnet": resnet, "hvit": hvit}
GROUPS = {"both": ["transformer", "hetero"], "all": list(MODELS)}


def rows_of(name, t):
    plain = t.plain.seconds
    rows = []
    for p in t.points:
        rows.append({"stack": name, "method": p.method,
                     "setting": (f"segments={p.segments}" if p.segments is not None else
                                 f"budget={p.budget_bytes:,}" if p.budget_bytes is not None else ""),
                     "plan": p.plan_method, "measured peak bytes": p.peak_bytes,
                     "predicted peak bytes": p.predicted_peak_bytes, "recomputed blocks": p.recomputed_blocks,
                     "s/iter": p.seconds, "x plain": p.seconds / plain, "least cpu s/iter": min(p.cpu_times),
                     "x plain (least cpu)": min(p.cpu_times) / min(t.plain.cpu_times)})
    return rows


def paired(a, b, cpu=False):
    """How much faster a is than b, paired round by round (bench_common.faster_paired), in wall or CPU time."""
    return bc.faster_paired(a.cpu_times, b.cpu_times) if cpu else bc.faster_paired(a.times, b.times)


def gain_bound(profiles, segments, peak_bytes):
    """The most any schedule within `peak_bytes` can be faster than checkpoint_sequential at `segments`, as
    the profile prices them (f_k forward, b_k forward plus backward seconds): 1 - (a lower bound on any
    schedule's cost) / the segments' cost. Any schedule runs every block once forward and once backward
    (plain autograd's cost) and, at the moment its forward ends, holds the tapes of some blocks S within
    the peak; every other block is run again: cost >= plain + min {sum of f_k over k not in S : sum of
    saved_k over S <= peak}, saved_k the storages block k saves besides its input and output (fewer bytes
    than its tape holds, so the bound is lower still). The minimum is bounded below by the fractional
    knapsack (blocks kept in order of f_k / saved_k, the last one in part). The segments re-run
    (n // s) * (s - 1) blocks from the first."""
    n = len(profiles)
    forward = [p.forward_seconds for p in profiles]
    plain = sum(p.forward_seconds + p.backward_seconds for p in profiles)
    rerun = (n // segments) * (segments - 1)
    sequential = plain + sum(forward[:rerun])
    def worth(k):  # forward seconds a tape saves per byte (a block saving nothing first)
        saved = profiles[k].saved_bytes
        return forward[k] / saved if saved else float("inf")

    room, kept = peak_bytes, 0.0
    for k in sorted(range(n), key=worth, reverse=True):
        saved = profiles[k].saved_bytes
        take = 1.0 if saved <= room else room / saved
        kept += take * forward[k]
        room -= take * saved
    return 1 - (plain + sum(forward) - kept) / sequential


def segments_actions(n, segments):
    """checkpoint_sequential's schedule at `segments` as remat actions: each checkpointed segment (n // segments
    blocks) stores its input and runs without grad; the last (the rest) runs keeping its graph (taped, its
    last block reversed where it stands, as every plan reverses block n-1); the backward reverses it, then
    re-runs each segment from its input with grad and reverses it."""
    import remat

    size = n // segments
    starts = [i * size for i in range(segments - 1)]
    last = (segments - 1) * size
    lines = []
    for slot, a in enumerate(starts):
        lines += [f"store 0 {slot} {a}", f"advance {a} {a + size}"]
    lines += [f"advance {k} {k + 1} tape" for k in range(last, n - 1)]
    lines += [f"reverse {k}" for k in reversed(range(last, n))]
    for slot in reversed(range(len(starts))):
        a = starts[slot]
        lines += [f"restore 0 {slot} {a}", f"free 0 {slot}"]
        lines += [f"advance {k} {k + 1} tape" for k in range(a, a + size - 1)]
        lines += [f"reverse {k}" for k in reversed(range(a, a + size))]
    return [remat.parse_action(line) for line in lines]


def segments_priced(profiles, segments):
    """(peak bytes, cost) of checkpoint_sequential's schedule under the chain model auto_checkpoint plans with
    (the blocks' profile as auto_checkpoint maps it)."""
    from remat.torch._chain_budget import price
    from remat.torch._profile import chain_steps

    return price(chain_steps(profiles), profiles[-1].output_bytes, segments_actions(len(profiles), segments))


def executor_rows(name, model, x, t, rounds, device):
    """checkpoint_sequential at each segment count against auto_checkpoint's runtime following the segments' own
    schedule (segments_actions given as its actions), with reach_parameters=False (as the reentrant
    checkpoint) and True (the default: its node takes the parameters, for torch.autograd.grad): the same blocks
    run, stored, re-run and reversed in the same order, so that their paired ratio is what the runtime costs
    apart from the plan (the goals' rows compare plans as well). Gradients (the parameters' and the input's)
    compared bit for bit, once each."""
    import torch

    from remat.torch._auto import AutoCheckpoint
    from remat.torch._tradeoff import _iteration

    blocks, n = list(model), len(model)
    x = x.detach().clone().requires_grad_()  # as tradeoff measures: every method computes the input's gradient
    params = [p for p in model.parameters() if p.requires_grad]
    loss = lambda y: y.sum()  # noqa: E731  (tradeoff's default loss)

    def iteration(run):  # as tradeoff times one: the gradients set to None first
        _iteration(run, x, params, loss)

    def grads(run):
        iteration(run)
        return [g.clone() for g in (x.grad, *(p.grad for p in params))]

    runs, equal = {}, {}
    for s in (p.segments for p in t.sequential if p.segments > 1):
        sequential = (lambda s: lambda v: torch.utils.checkpoint.checkpoint_sequential(model, s, v))(s)
        actions = segments_actions(n, s)
        runs[f"sequential {s}"] = sequential
        want = grads(sequential)
        equal[s] = True
        for reach in (False, True):
            following = AutoCheckpoint(blocks, x, segments_priced(t.profiles, s)[0], t.profiles, t.plain.peak_bytes,
                                       True, True, actions=actions, reach_parameters=reach)
            following.measure_memory = False
            equal[s] = equal[s] and all(torch.equal(a, b) for a, b in zip(want, grads(following)))
            runs[f"runtime {s} {reach}"] = following
    cpu = {}
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    wall = bc.interleaved({k: (lambda r: lambda: iteration(r))(r) for k, r in runs.items()}, rounds, sync,
                          f"{name}: runtime on the segments' schedule: ", cpu)
    def slower(times, s, reach):
        return -bc.faster_paired(times[f"runtime {s} {reach}"], times[f"sequential {s}"])

    return [{"stack": name, "segments": s, "sequential s/iter": bc.median(wall[f"sequential {s}"]),
             "runtime s/iter": bc.median(wall[f"runtime {s} False"]),
             "runtime slower by (paired wall)": slower(wall, s, False),
             "runtime slower by (paired cpu)": slower(cpu, s, False),
             "reaching parameters: slower by (paired wall)": slower(wall, s, True),
             "reaching parameters: slower by (paired cpu)": slower(cpu, s, True),
             "gradients bit-equal": equal[s]} for s in equal]


def goals_of(name, t):
    """Per checkpoint_sequential point: the auto_checkpoint point of the largest budget whose measured peak is
    at most the segments' (chosen by memory, not by its time, so that the pairing does not depend on noise).
    The "(profile)" columns price on the profile tradeoff planned from (t.profiles): the auto_checkpoint
    point's cost is its module's own prediction (predicted_cost), of the plan it ran."""
    profiles = t.profiles
    rows = []
    for p in t.sequential:
        fits = [a for a in t.auto if a.peak_bytes <= p.peak_bytes]
        a = max(fits, key=lambda a: a.budget_bytes) if fits else None
        modelled, sequential_cost = segments_priced(profiles, p.segments) if profiles else (None, None)
        predicted = 1 - a.predicted_cost / sequential_cost if profiles and a else None
        rows.append({"stack": name, "segments": p.segments, "sequential peak": p.peak_bytes,
                     "sequential peak (model)": modelled,
                     "sequential recomputed": p.recomputed_blocks, "sequential s/iter": p.seconds,
                     "auto budget": a.budget_bytes if a else None, "auto peak": a.peak_bytes if a else None,
                     "auto recomputed": a.recomputed_blocks if a else None, "auto s/iter": a.seconds if a else None,
                     "auto faster by": (1 - a.seconds / p.seconds) if a else None,
                     "never slower": (a.seconds <= p.seconds) if a else False,
                     "auto faster by (least cpu)": (1 - min(a.cpu_times) / min(p.cpu_times)) if a else None,
                     "auto faster by (paired wall)": paired(a, p) if a else None,
                     "auto faster by (paired cpu)": paired(a, p, cpu=True) if a else None,
                     "auto faster by (profile)": predicted,
                     "most any schedule can gain (profile)": (gain_bound(profiles, p.segments, p.peak_bytes)
                                                              if profiles else None)})
    at_plain = [a for a in t.auto if a.budget_bytes >= t.plain.peak_bytes]
    summary = {"stack": name, "plain s/iter": t.plain.seconds, "plain peak": t.plain.peak_bytes,
               "auto at plain's peak s/iter": at_plain[0].seconds if at_plain else None,
               "auto / plain": at_plain[0].seconds / t.plain.seconds if at_plain else None,
               "within 3%": (at_plain[0].seconds <= 1.03 * t.plain.seconds) if at_plain else None,
               "auto / plain (least cpu)": min(at_plain[0].cpu_times) / min(t.plain.cpu_times) if at_plain else None,
               "auto / plain (paired wall)": 1 - paired(at_plain[0], t.plain) if at_plain else None,
               "auto / plain (paired cpu)": 1 - paired(at_plain[0], t.plain, cpu=True) if at_plain else None,
               "least speedup over sequential": min((r["auto faster by"] for r in rows
                                                     if r["auto faster by"] is not None), default=None),
               "median speedup over sequential": bc.median([r["auto faster by"] for r in rows
                                                            if r["auto faster by"] is not None] or [0.0]),
               "median speedup (least cpu)": bc.median([r["auto faster by (least cpu)"] for r in rows
                                                        if r["auto faster by (least cpu)"] is not None] or [0.0]),
               "median speedup (paired wall)": bc.median([r["auto faster by (paired wall)"] for r in rows
                                                          if r["auto faster by (paired wall)"] is not None] or [0.0]),
               "median speedup (paired cpu)": bc.median([r["auto faster by (paired cpu)"] for r in rows
                                                         if r["auto faster by (paired cpu)"] is not None] or [0.0]),
               "most any schedule can gain (profile)": max((r["most any schedule can gain (profile)"] for r in rows
                                                            if r["most any schedule can gain (profile)"] is not None),
                                                           default=None)}
    return rows, summary


def main():
    p = bc.parser(bc.summary(__doc__), "24-27 blocks per stack, batch 2 x 32 (resnet and hvit: 4 images of 64x64), "
                  "5 rounds", "4-7 narrow blocks, batch 2 x 8, 2 rounds")
    p.add_argument("--model", choices=(*MODELS, *GROUPS), default="all",
                   help="one stack, both (transformer and hetero) or all four (default)")
    p.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu")
    p.add_argument("--svg", metavar="DIR", help="write each stack's tradeoff picture as DIR/STACK.svg")
    p.add_argument("--reach-parameters", choices=("yes", "no"), default="no",
                   help="auto_checkpoint's reach_parameters in the tradeoff (default no: as checkpoint_sequential's "
                        "reentrant checkpoint, torch.autograd.grad cannot reach the parameters through its node)")
    args = p.parse_args()
    reach = args.reach_parameters == "yes"
    rounds = bc.rounds_of(args, 5, 2)
    import torch

    import remat.torch

    device = bc.device_of(args.device)
    bc.set_threads(args)
    names = GROUPS.get(args.model, [args.model])
    tables, summaries, data = [], [], {}
    for name in names:
        model, x = MODELS[name](args.quick, device)
        t = remat.torch.tradeoff(model, x, rounds=rounds, reach_parameters=reach,
                                 progress=lambda s, n=name: bc.progress(f"{n}: {s}"))
        data[name] = t.as_dict()
        if args.svg:
            os.makedirs(args.svg, exist_ok=True)
            t.save_svg(os.path.join(args.svg, f"{name}.svg"), title=f"{name} stack ({device.type}, {len(model)} "
                       "blocks): measured peak against time per iteration")
        tables.append({"title": f"{name} stack: every configuration ({device.type}, {rounds} rounds, auto_checkpoint "
                                f"with reach_parameters={reach})",
                       "columns": ["method", "setting", "plan", "measured peak bytes", "predicted peak bytes",
                                   "recomputed blocks", "s/iter", "x plain", "least cpu s/iter",
                                   "x plain (least cpu)"],
                       "rows": rows_of(name, t)})
        goal_rows, summary = goals_of(name, t)
        tables.append({"title": f"{name} stack: auto_checkpoint at equal or lower peak than checkpoint_sequential",
                       "columns": ["segments", "sequential peak", "sequential peak (model)",
                                   "sequential recomputed", "sequential s/iter",
                                   "auto budget", "auto peak", "auto recomputed", "auto s/iter", "auto faster by",
                                   "never slower", "auto faster by (least cpu)", "auto faster by (paired wall)",
                                   "auto faster by (paired cpu)", "auto faster by (profile)",
                                   "most any schedule can gain (profile)"],
                       "rows": goal_rows})
        summaries.append(summary)
        tables.append({"title": f"{name} stack: auto_checkpoint's runtime on checkpoint_sequential's own schedule",
                       "columns": ["segments", "sequential s/iter", "runtime s/iter", "runtime slower by (paired wall)",
                                   "runtime slower by (paired cpu)", "reaching parameters: slower by (paired wall)",
                                   "reaching parameters: slower by (paired cpu)", "gradients bit-equal"],
                       "rows": executor_rows(name, model, x, t, rounds, device)})
    tables.append({"title": "summary", "columns": list(summaries[0].keys()), "rows": summaries})
    bc.emit(args, tables, {"device": str(device), "rounds": rounds, "tradeoffs": data,
                           "torch": torch.__version__, "reach_parameters": reach})


if __name__ == "__main__":
    main()
