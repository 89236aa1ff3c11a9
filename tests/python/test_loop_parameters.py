"""checkpoint_loop's parameters where a function step does not differentiate the same tensors at every step:
a step that runs layers[k] (each step its own parameters), and steps that use a context computed before the
loop (a decoder's encoder outputs, softplus(raw)). Gradients against the plain loop's, torch.equal."""

import pytest

torch = pytest.importorskip("torch")
import remat  # noqa: E402
import remat.torch  # noqa: E402

T = 12


def grads_of(tensors):
    out = [None if t.grad is None else t.grad.clone() for t in tensors]
    for t in tensors:
        t.grad = None
    return out


def same(a, b):
    return all((x is None and y is None) or (x is not None and y is not None and torch.equal(x, y))
               for x, y in zip(a, b))


def loss_grads(make, leaves, loop, **options):
    """The gradients of `leaves` (and x_0's) after a T-step loop of make()'s step, plain or checkpointed."""
    step, extra = make()
    h0 = torch.zeros(2, 8, requires_grad=True)
    if loop:
        h = remat.torch.checkpoint_loop(step, h0, steps=T, **extra, **options)
    else:
        h = h0
        for k in range(T):
            h = step(k, h)
    h.pow(2).sum().backward()
    return grads_of(leaves) + [h0.grad]


MEMORY = [dict(slots=3), dict(slots=1), dict(slots=3, snapshots="disk"), dict(slots=40, taped=True),
          dict(slots=8, taped=True)]


@pytest.mark.parametrize("memory", MEMORY)
def test_a_step_over_its_own_layer_is_refused_not_silently_missing_gradients(memory):
    """step(k, x) = layers[k](x): the parameters were found on step 0 alone, and layers 1..T-1 got no gradient
    (.grad None, plain autograd's there), silently. Now the backward refuses naming params=, which makes it
    exact."""
    torch.manual_seed(0)
    layers = torch.nn.ModuleList([torch.nn.Linear(8, 8) for _ in range(T)])
    params = list(layers.parameters())
    plain = loss_grads(lambda: (lambda k, h: torch.tanh(layers[k](h)), {}), params, loop=False)
    with pytest.raises(remat.BackwardError, match=r"step \d+ uses a tensor requiring grad .* params="):
        loss_grads(lambda: (lambda k, h: torch.tanh(layers[k](h)), {}), params, loop=True, **memory)
    grads_of(params)
    given = loss_grads(lambda: (lambda k, h: torch.tanh(layers[k](h)), dict(params=layers.parameters())), params,
                       loop=True, **memory)
    assert same(given, plain)


@pytest.mark.parametrize("memory", MEMORY)
def test_a_context_computed_before_the_loop_gets_its_gradient_once(memory):
    """A decoder-like step over an encoder's output and a positive scale softplus(raw), both computed before the
    loop: the backward failed with autograd's "Trying to backward through the graph a second time" (each
    step's backward went through the encoder's graph). Now the contexts are the Function's inputs and their
    gradients flow through that graph once, as plain autograd's."""
    torch.manual_seed(1)
    encoder = torch.nn.Linear(8, 8)
    w = torch.nn.Parameter(torch.randn(8, 8) / 3)
    raw = torch.nn.Parameter(torch.randn(8))
    source = torch.randn(2, 8)
    leaves = [w, raw, *encoder.parameters()]

    def make():
        context = torch.tanh(encoder(source))
        scale = torch.nn.functional.softplus(raw)
        return (lambda k, h: torch.tanh(h @ w + context) * scale), {}

    assert same(loss_grads(make, leaves, loop=True, **memory), loss_grads(make, leaves, loop=False))


def test_a_context_in_the_online_form_and_a_module_step_given_it_as_a_parameter():
    torch.manual_seed(2)
    encoder = torch.nn.Linear(8, 8)
    source = torch.randn(2, 8)

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)
            self.context = None

        def forward(self, k, h):
            return torch.tanh(self.lin(h) + self.context)

    decoder = Decoder()
    leaves = [*decoder.parameters(), *encoder.parameters()]

    def make():
        decoder.context = torch.tanh(encoder(source))
        return decoder, {}

    plain = loss_grads(make, leaves, loop=False)
    # a module's parameters do not include what it keeps besides them: refused, naming params=
    with pytest.raises(remat.BackwardError, match="params="):
        loss_grads(make, leaves, loop=True, slots=3)
    grads_of(leaves)

    def given():
        decoder.context = torch.tanh(encoder(source))
        return decoder, dict(params=[*decoder.parameters(), decoder.context])

    assert same(loss_grads(given, leaves, loop=True, slots=3), plain)

    def function_step():
        context = torch.tanh(encoder(source))
        return lambda k, h: torch.tanh(decoder.lin(h) + context)

    h0 = torch.zeros(2, 8)
    step = function_step()
    remat.torch.checkpoint_loop(step, h0, until=lambda k, h: k == T, slots=2).pow(2).sum().backward()
    online = grads_of(leaves)
    step, h = function_step(), h0
    for k in range(T):
        h = step(k, h)
    h.pow(2).sum().backward()
    assert same(online, grads_of(leaves))


def test_a_tensor_used_directly_and_through_a_context_is_refused_in_the_forward():
    """raw used by the step and also through softplus(raw) computed before the loop: each step's backward would
    go through softplus's graph for raw's gradient (autograd's "backward through the graph a second time" at
    the second). Refused in the forward, naming the remedy."""
    raw = torch.nn.Parameter(torch.randn(8))
    scale = torch.nn.functional.softplus(raw)
    with pytest.raises(remat.ArgumentError, match="both directly and through a tensor computed from it"):
        remat.torch.checkpoint_loop(lambda k, h: h * scale + raw, torch.zeros(8), steps=T, slots=3)


@pytest.mark.parametrize("memory", MEMORY)
def test_inputs_embedded_before_the_loop_and_indexed_per_step(memory):
    """The commonest recurrent loop: inputs = embed(tokens) made before it, step k reading inputs[k]. Every
    step's backward went through the embedding's graph (autograd's "backward through the graph a second time"
    at the second). inputs[k] is basic indexing, which PyTorch 1.13's TorchFunctionMode does not see: its base
    is the context. An indexed leaf (inputs requiring grad themselves) stays a parameter."""
    torch.manual_seed(3)
    embed, cell = torch.nn.Embedding(20, 8), torch.nn.GRUCell(8, 8)
    tokens = torch.randint(0, 20, (T, 2))
    leaves = [embed.weight, *cell.parameters()]

    def make():
        inputs = embed(tokens)
        return (lambda k, h: cell(inputs[k], h)), {}

    assert same(loss_grads(make, leaves, loop=True, **memory), loss_grads(make, leaves, loop=False))
    raw = torch.randn(T, 2, 8, requires_grad=True)
    leaves = [raw, *cell.parameters()]
    indexed = lambda: ((lambda k, h: cell(raw[k], h)), {})  # noqa: E731
    assert same(loss_grads(indexed, leaves, loop=True, **memory), loss_grads(indexed, leaves, loop=False))
