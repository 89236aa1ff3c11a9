// The spiral's batch, horizon, initial states and the loss's own gradient term at y_k.
const std::size_t batch = 16;
const std::int64_t T = 1000;
const std::vector<double> y0(2 * batch, 1.0);
const auto add_loss_gradient = [](auto /*k*/, const auto& /*y*/, auto& /*a*/) {};
