// A sequence task (its inputs and targets), the gradient's buffer and a store, as docs/rnn.md makes them.
const std::int64_t T = 100;
const std::vector<float> inputs(2 * 64 * T), targets(64 * T);
remat::dense::blas blas;
remat::host_store store(40);
remat::rnn::sequence<float> data({.input = 2, .output = 1, .batch = 64, .steps = T}, inputs, targets);
thrust::device_vector<float> grad(1000);
