// Internal: serial N_Vectors whose arrays come from a pool and go back to it, so that a fresh CVODES
// memory per window integration (the price of bit-identical recomputation, adjoint_solver.cpp) costs no
// allocation, page faults or returned pages: after the first windows every clone CVODES makes (its
// history array, interpolation data, checkpoints, the backward problems' and nonlinear solvers' vectors)
// reuses an array a previous integration gave back. Only where the bytes live changes, not what CVODES
// does: a pooled array is as uninitialised as malloc's, and CVODES writes every vector before reading it.
//
// The i-th array of a length that one integration asks for is the same array in every integration (the
// pool restarts its count at each window), so CVODES's vectors that a window never touches (history
// columns above the order used, interpolation points beyond the window's steps) keep arrays that were
// never touched either: the resident memory stays what fresh allocations would make resident.
#pragma once

#include "handles.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace remat::cvodes::detail {

class vector_pool {
public:
    vector_pool() = default;
    vector_pool(const vector_pool&) = delete;
    vector_pool& operator=(const vector_pool&) = delete;
    ~vector_pool();

    /// A serial vector of `size` doubles (zeros, an array of its own) whose clones, and their clones, take
    /// their arrays from this pool and give them back when destroyed. Every such vector must be destroyed
    /// before the pool.
    vector_ptr new_vector(std::size_t size, SUNContext ctx);

    /// A new integration begins: the next request for each length gets that length's first idle array.
    void restart() noexcept;

    // For the N_Vector operations (vector_pool.cpp): the array for the next request of `length` doubles
    // and its index (throws std::bad_alloc); an array given back by its index.
    double* take(sunindextype length, std::size_t& index);
    void give(sunindextype length, std::size_t index) noexcept;

private:
    struct shelf {
        std::vector<std::unique_ptr<double[]>> arrays; // in the order an integration asked for them
        std::vector<bool> in_use;
        std::size_t next = 0; // where this integration's next request looks first
    };
    std::map<sunindextype, shelf> shelves_;
    std::uint64_t arrays_in_use_ = 0;
};

} // namespace remat::cvodes::detail
