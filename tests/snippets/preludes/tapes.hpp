// A loop whose steps can record a tape (what the adjoint reads) instead of re-running.
using State = std::vector<double>;
const std::int64_t T = 1000;
const std::size_t n = 3;
State x(n), a(n);
const auto step = [](auto /*k*/, State& /*x*/) {};
const auto dJ_dx = [](const State& xT) { return xT; };
struct any_tape { // converts to whatever tape type the snippet declares
    template <class Tape>
    operator Tape() const
    {
        return Tape{};
    }
};
const auto record = [](auto /*k*/, auto& /*x*/) { return any_tape{}; };
const auto backward = [](auto /*k*/, auto& /*tape*/, auto&... /*adjoint*/) {};
const auto record_into = [](auto /*k*/, auto& /*x*/, auto& /*tape*/) {};
