// A three-variable model (Lorenz-63 as in examples/lorenz63_gradient), a plan and a store for it.
using vec3 = std::array<double, 3>;
struct vec3_model {
    void step(vec3&) const {}
    void adjoint_step(vec3&, vec3&, vec3&) const {}
};
const vec3_model model;
vec3 x{1, 1, 1}, lambda{}, grad{}, grad_p{};
double J = 0;
remat::revolve plan(1000, 20);
remat::host_store store(20);
std::vector<vec3> snapshots(20);
