// The callables of a taped run as docs/tapes.md names them, on a std::vector<double> state.
struct tape_data {
    std::vector<double> x;
};
const auto record = [](auto /*k*/, std::vector<double>& /*x*/, tape_data& /*tape*/) {};
const auto backward = [](auto /*k*/, tape_data& /*tape*/) {};
const auto make_tape = [] { return tape_data{}; };
const auto f = [](auto /*k*/, std::vector<double>& /*x*/) {};
const auto g = [](auto /*k*/, std::vector<double>& /*x*/) {};
