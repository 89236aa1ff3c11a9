#!/usr/bin/env python3
"""PyTorch's reference for tests/rnn/rnn_crosscheck_test.cpp: nn.GRU or nn.LSTM (float64, CPU) with the
weights, inputs and targets remat used, a linear read-out, the mean squared error after the last step
or after every step, and autograd's gradient of it.

    torch_reference.py CASE.json RESULT.json

CASE holds the shape, the flat parameter vector in remat's layout (per layer W_ih, W_hh as column-major
G H x in and G H x H, b_ih, b_hh; then W_out column-major, b_out), inputs (T, B, input) and targets
(T or 1, B, output), all flattened. RESULT holds the loss, the gradient in remat's layout and dL/dh_0, and
the bytes autograd saves for the backward pass of one step of nn.GRUCell or nn.LSTMCell (layer 0's sizes)."""
import json
import sys

import torch


def saved_bytes_of_one_step(cell, n_in, hidden, batch):
    """What autograd keeps of one step of a cell for its backward pass (float64): every tensor it saves,
    each storage counted once, but the parameters and the input x (which outlive the step): the step's
    tape, its input state included, as remat's bptt::tape_bytes() counts it."""
    m = (torch.nn.LSTMCell if cell == "lstm" else torch.nn.GRUCell)(n_in, hidden)
    x = torch.rand(batch, n_in)
    h = torch.rand(batch, hidden, requires_grad=True)
    c = torch.rand(batch, hidden, requires_grad=True)
    outside = {p.storage().data_ptr() for p in m.parameters()} | {x.storage().data_ptr()}
    saved = {}

    def pack(t):
        if t.storage().data_ptr() not in outside:
            saved[t.storage().data_ptr()] = t.storage().size() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        m(x, (h, c)) if cell == "lstm" else m(x, h)
    return sum(saved.values())


def main():
    with open(sys.argv[1]) as f:
        case = json.load(f)
    torch.set_default_dtype(torch.float64)
    cell, n_in, hidden = case["cell"], case["input"], case["hidden"]
    layers, n_out, batch, steps = case["layers"], case["output"], case["batch"], case["steps"]
    every_step = case["loss"] == "every_step"
    gates = 4 if cell == "lstm" else 3
    rnn = (torch.nn.LSTM if cell == "lstm" else torch.nn.GRU)(n_in, hidden, num_layers=layers)
    readout = torch.nn.Linear(hidden, n_out)
    flat = torch.tensor(case["params"])

    # remat's column-major (rows x cols) block at `at`, as a row-major PyTorch matrix.
    def take(at, rows, cols):
        return flat[at:at + rows * cols].reshape(cols, rows).t().contiguous(), at + rows * cols

    at = 0
    mapping = []  # (PyTorch parameter, rows, cols) in remat's order
    with torch.no_grad():
        for l in range(layers):
            inputs = n_in if l == 0 else hidden
            for name, cols in (("weight_ih", inputs), ("weight_hh", hidden), ("bias_ih", 1), ("bias_hh", 1)):
                p = getattr(rnn, f"{name}_l{l}")
                value, at = take(at, gates * hidden, cols)
                p.copy_(value.reshape(p.shape))
                mapping.append((p, gates * hidden, cols))
        for p, rows, cols in ((readout.weight, n_out, hidden), (readout.bias, n_out, 1)):
            value, at = take(at, rows, cols)
            p.copy_(value.reshape(p.shape))
            mapping.append((p, rows, cols))
    assert at == flat.numel(), f"{flat.numel()} parameters given, the model has {at}"

    x = torch.tensor(case["inputs"]).reshape(steps, batch, n_in)
    targets = torch.tensor(case["targets"]).reshape(steps if every_step else 1, batch, n_out)
    h0 = torch.zeros(layers, batch, hidden, requires_grad=True)
    if cell == "lstm":
        c0 = torch.zeros(layers, batch, hidden, requires_grad=True)
        out, _ = rnn(x, (h0, c0))
    else:
        out, _ = rnn(x, h0)
    y = readout(out if every_step else out[-1:])
    loss = torch.mean((y - targets) ** 2)
    loss.backward()

    grad = []
    for p, rows, cols in mapping:
        grad += p.grad.reshape(rows, cols).t().reshape(-1).tolist()  # back to column-major
    # dL/dh_0 in remat's state layout: per layer h (H x B, column j = batch member j), then c for LSTM.
    initial = []
    for l in range(layers):
        initial += h0.grad[l].reshape(-1).tolist()
        if cell == "lstm":
            initial += c0.grad[l].reshape(-1).tolist()
    with open(sys.argv[2], "w") as f:
        json.dump({"loss": loss.item(), "grad": grad, "initial": initial, "torch": torch.__version__,
                   "saved_bytes_per_step": saved_bytes_of_one_step(cell, n_in, hidden, batch)}, f)


if __name__ == "__main__":
    main()
