// This rank's part of a distributed state, its solver (which exchanges halos) and its step count.
const std::int64_t T = 1000;
std::vector<double> my_part(100), u(100), a(100);
const std::size_t my_bytes = my_part.size() * sizeof(double);
const auto my_part_of_x0 = [] { return std::vector<double>(100); };
struct distributed_solver {
    void step(std::vector<double>&) const {}
    void adjoint_step(std::int64_t, std::vector<double>&, std::vector<double>&) const {}
};
const distributed_solver solver;
const auto forward = [](auto /*k*/, auto& /*x*/) {};
const auto adjoint = [](auto /*k*/, auto& /*x*/) {};
