// A small nonlinear recurrence for the taped-driver tests: x_{k+1} = tanh(W x_k + b + s_k), with the
// gradients of J = sum(x_T) with respect to x_0, W and b. Its adjoint is split as a cell's would be:
// record(k, x, tape) runs step k keeping x_k and x_{k+1}, backward(k, tape) back-propagates from the
// tape, and the plain adjoint step is their composition, so taped and state-only runs execute the same
// arithmetic on the same values.
#pragma once

#include "remat/types.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace test {

struct tanh_tape {
    std::vector<double> x; // x_k
    std::vector<double> y; // x_{k+1}
};

class tanh_recurrence {
public:
    explicit tanh_recurrence(std::size_t n) : n_(n), w_(n * n), b_(n)
    {
        for (std::size_t i = 0; i < n; ++i) {
            b_[i] = 0.1 * static_cast<double>(i) - 0.2;
            for (std::size_t j = 0; j < n; ++j)
                w_[i * n + j] = 0.9 * std::sin(1.0 + static_cast<double>(3 * i + 7 * j)) / std::sqrt(double(n));
        }
    }

    [[nodiscard]] std::size_t size() const noexcept { return n_; }
    [[nodiscard]] tanh_tape make_tape() const { return {std::vector<double>(n_), std::vector<double>(n_)}; }

    // y = tanh(W x + b + s_k); y may not alias x.
    void compute(remat::step_t k, const std::vector<double>& x, std::vector<double>& y) const
    {
        const double s = 0.05 * std::cos(0.3 * static_cast<double>(k));
        for (std::size_t i = 0; i < n_; ++i) {
            double v = b_[i] + s;
            for (std::size_t j = 0; j < n_; ++j)
                v += w_[i * n_ + j] * x[j];
            y[i] = std::tanh(v);
        }
    }

    // Step k in place, computed as record computes it.
    void step(remat::step_t k, std::vector<double>& x, tanh_tape& scratch) const { record(k, x, scratch); }

    // Step k from x == x_k, keeping x_k and x_{k+1} in the tape; leaves x == x_{k+1}.
    void record(remat::step_t k, std::vector<double>& x, tanh_tape& t) const
    {
        t.x = x;
        compute(k, t.x, t.y);
        x = t.y;
    }

    struct adjoint_state {
        std::vector<double> a, dw, db, scratch;
    };

    [[nodiscard]] adjoint_state seeded() const
    {
        return {std::vector<double>(n_, 1.0), std::vector<double>(n_ * n_), std::vector<double>(n_),
                std::vector<double>(n_)};
    }

    // a_k from a_{k+1}, dW and db accumulated, from step k's tape.
    void backward(const tanh_tape& t, adjoint_state& s) const
    {
        for (std::size_t i = 0; i < n_; ++i) {
            const double d = s.a[i] * (1.0 - t.y[i] * t.y[i]);
            s.scratch[i] = d;
            s.db[i] += d;
            for (std::size_t j = 0; j < n_; ++j)
                s.dw[i * n_ + j] += d * t.x[j];
        }
        for (std::size_t j = 0; j < n_; ++j) {
            double v = 0;
            for (std::size_t i = 0; i < n_; ++i)
                v += w_[i * n_ + j] * s.scratch[i];
            s.a[j] = v;
        }
    }

private:
    std::size_t n_;
    std::vector<double> w_, b_;
};

} // namespace test
