// A time-stepping loop on a std::vector<double> state: the step count, the initial state, the user's steps
// and the objective's gradient, as the snippets name them (generic lambdas: any step index and state type).
const std::int64_t T = 1000;
const std::vector<double> x0(3, 1.0);
std::vector<double> x = x0;
const auto step = [](auto /*k*/, auto& /*x*/) {};
const auto adjoint_step = [](auto /*k*/, auto& /*x*/, auto& /*a*/) {};
const auto dJ_dx = [](const auto& xT) { return xT; };
const auto forward = [](auto /*k*/, auto& /*x*/) {};
const auto adjoint = [](auto /*k*/, auto& /*x*/) {};
