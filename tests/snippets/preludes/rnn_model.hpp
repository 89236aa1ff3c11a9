// An LSTM's back-propagation through time and a memory budget.
remat::rnn::sequence_model<float>
    model(blas, remat::rnn::rnn_layout({.cell = remat::rnn::cell_kind::lstm, .input = 2, .hidden = 128, .output = 1}),
          64);
remat::rnn::bptt<float> bp(model);
const std::uint64_t budget = std::uint64_t{1} << 30;
