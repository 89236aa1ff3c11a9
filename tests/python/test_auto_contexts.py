"""auto_checkpoint over blocks that compute from a tensor made outside the model (a cross-attention's memory):
below plain autograd's peak, blocks are back-propagated apart and each such backward went through that
tensor's graph, which autograd allows once."""

import pytest

torch = pytest.importorskip("torch")
import remat  # noqa: E402
import remat.torch  # noqa: E402


class Cross(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.memory = None

    def forward(self, x):
        return torch.tanh(self.lin(x) + self.memory)


def test_a_block_over_a_memory_made_outside_is_refused_below_plain_autograds_peak():
    """Made below plain autograd's peak, the module's backward failed after its forward with autograd's "Trying
    to backward through the graph a second time". Now refused when it is made, naming the block; at plain
    autograd's peak (one graph, one backward) it runs, its gradients plain autograd's."""
    torch.manual_seed(0)
    encoder = torch.nn.Linear(16, 16)
    source, x = torch.randn(4, 16), torch.randn(4, 16)
    blocks = torch.nn.Sequential(*[Cross() for _ in range(6)])

    def set_memory():
        memory = torch.tanh(encoder(source))
        for b in blocks:
            b.memory = memory

    set_memory()
    probe = remat.torch.auto_checkpoint(blocks, x, budget="1GiB", repeats=0)
    assert probe.method == "plain autograd"
    for taped in (True, False):
        with pytest.raises(remat.ArgumentError, match=r"block 0 computes from a tensor made outside the model .*"
                                                      r"\(shape \(4, 16\)"):
            remat.torch.auto_checkpoint(blocks, x, budget=probe.plain_peak_bytes - 1, repeats=0, taped=taped)
    params = [*blocks.parameters(), *encoder.parameters()]
    set_memory()
    probe(x).sum().backward()
    fast = [p.grad.clone() for p in params]
    for p in params:
        p.grad = None
    set_memory()
    blocks(x).sum().backward()
    assert all(torch.equal(a, p.grad) for a, p in zip(fast, params))
    # a memory that needs no gradient is no such tensor
    with torch.no_grad():
        set_memory()
    least = remat.torch.auto_checkpoint(blocks, x, budget=probe.plain_peak_bytes - 1, repeats=0)
    assert least.method == "remat.chain_taped"


def test_a_block_slicing_its_own_parameter_is_no_context():
    """A position embedding sliced per input (self.pos[:, :n]: a view of a parameter, made inside the block by
    indexing that PyTorch 1.13's TorchFunctionMode does not see) is the block's own: planned below plain
    autograd's peak, gradients plain autograd's."""
    class Positioned(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.pos = torch.nn.Parameter(torch.randn(1, 32, 16))
            self.lin = torch.nn.Linear(16, 16)

        def forward(self, x):
            return torch.tanh(self.lin(x + self.pos[:, :x.shape[1]]))

    torch.manual_seed(1)
    blocks = torch.nn.Sequential(*[Positioned() for _ in range(5)])
    x = torch.randn(2, 8, 16)
    probe = remat.torch.auto_checkpoint(blocks, x, budget="1GiB", repeats=0)
    fast = remat.torch.auto_checkpoint(blocks, x, budget=probe.least_budget_bytes, repeats=0)
    assert fast.method == "remat.chain_taped" and fast.recomputed_blocks > 0
    fast(x).sum().backward()
    got = [p.grad.clone() for p in blocks.parameters()]
    for p in blocks.parameters():
        p.grad = None
    blocks(x).sum().backward()
    assert all(torch.equal(a, p.grad) for a, p in zip(got, blocks.parameters()))
