// An adaptive solver whose step count is found as it goes (online schedules): its state type, its steps and
// the test that says a step was the last.
using State = std::vector<double>;
struct adaptive_solver {
    void step(State&) const {}
    void adjoint_step(std::int64_t, State&, State&) const {}
    [[nodiscard]] bool clips_to_final_time(const State&) const { return false; }
    [[nodiscard]] bool last_step(const State&) const { return false; }
};
const adaptive_solver solver;
State lambda(3);
const auto f = [](auto /*k*/, State& /*x*/) {};
const auto g = [](auto /*k*/, State& /*x*/) {};
const auto seed = [](const State& /*xT*/) {};
