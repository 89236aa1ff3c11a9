// A float state on the GPU, the user's kernels as steps, and the CUDA stream they run on.
const std::int64_t T = 1000;
const std::vector<float> x0(1024, 1.0f);
thrust::device_vector<float> a(1024);
const auto step = [](auto /*k*/, auto& /*x*/) {};
const auto adjoint = [](auto /*k*/, auto& /*x*/, auto& /*a*/) {};
cudaStream_t my_stream = nullptr;
