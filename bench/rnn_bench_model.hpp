// bench/rnn_bench_model.hpp — the model the RNN benches measure (bench/rnn_bptt's rows, rnn_backward_steps): one
// layer of `cell` with `hidden` units over `input` inputs and one output, initial_parameters(1), subnormals flushed
// where asked. Written once so that the step-by-step bench measures the very model the rows do.
#pragma once

#include "remat/dense/blas.hpp"
#include "remat/rnn/layout.hpp"
#include "remat/rnn/sequence_model.hpp"

#include <cstdint>
#include <string>

struct rnn_bench_model {
    remat::dense::blas blas; // before the model, which keeps a reference to it
    remat::rnn::rnn_layout layout;
    remat::rnn::sequence_model<float> model;

    rnn_bench_model(const std::string& cell, std::int64_t input, std::int64_t hidden, std::int64_t batch,
                    bool flush_denormals)
        : layout({.cell = remat::rnn::parse_cell(cell), .input = input, .hidden = hidden, .layers = 1, .output = 1}),
          model(blas, layout, batch)
    {
        model.set_parameters(layout.initial_parameters(1));
        model.set_flush_denormals(flush_denormals);
    }
};
