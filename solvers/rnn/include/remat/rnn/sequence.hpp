// remat/rnn/sequence.hpp — one batch of input sequences and their targets, in the memory of this
// translation unit's back end (GPU memory under nvcc, host memory under a Thrust CPU back end).
#pragma once

#include "remat/dense/config.hpp"
#include "remat/dense/matrix.hpp"
#include "remat/error.hpp"
#include "remat/types.hpp"

#include <thrust/device_vector.h>
#include <thrust/host_vector.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>

namespace remat::rnn {

/// Where the loss looks at the read-out: after the last step only, or after every step.
enum class loss_at : unsigned char { last_step, every_step };

/// The shape of a batch of sequences.
struct sequence_shape {
    std::int64_t input = 0;  ///< features per step and batch member
    std::int64_t output = 0; ///< target features
    std::int64_t batch = 0;
    step_t steps = 0; ///< T
    loss_at loss = loss_at::last_step;
};

inline namespace REMAT_DENSE_BACKEND_NS {

/// B sequences of T steps: inputs x_k (input x B, column j for batch member j) for k = 0..T-1, stored
/// step after step, and targets for the read-out after step T-1 (output x B) or after every step
/// (output x B per step). The loss is their mean squared error.
///
///     remat::rnn::sequence<float> data({.input = 2, .output = 1, .batch = 64, .steps = 1000},
///                                      inputs /* 2*64*1000 values */, targets /* 64 values */);
template <class T>
class sequence {
public:
    /// Copies the host values in (converted to T). Throws remat::argument_error for a length-0 sequence,
    /// a size below 1, a value count that does not fit the shape, or a value that is not finite (naming
    /// where it is).
    template <class U>
    sequence(const sequence_shape& shape, std::span<const U> inputs, std::span<const U> targets) : shape_(shape)
    {
        if (shape.steps < 1)
            throw argument_error("sequence length " + std::to_string(shape.steps) + " (expected at least 1 step)");
        check_size("input features", shape.input);
        check_size("output features", shape.output);
        check_size("batch size", shape.batch);
        check_values("inputs", inputs, shape.input, shape.steps);
        check_values("targets", targets, shape.output, shape.loss == loss_at::every_step ? shape.steps : 1);
        thrust::host_vector<T> x(inputs.begin(), inputs.end());
        thrust::host_vector<T> t(targets.begin(), targets.end());
        inputs_ = x;
        targets_ = t;
    }
    template <class U>
    sequence(const sequence_shape& shape, const std::vector<U>& inputs, const std::vector<U>& targets)
        : sequence(shape, std::span<const U>(inputs), std::span<const U>(targets))
    {
    }

    [[nodiscard]] const sequence_shape& shape() const noexcept { return shape_; }
    [[nodiscard]] step_t steps() const noexcept { return shape_.steps; }
    /// x_k: input x B.
    [[nodiscard]] dense::matrix_view<const T> input(step_t k) const noexcept
    {
        return dense::dense_matrix(thrust::raw_pointer_cast(inputs_.data()) + k * shape_.input * shape_.batch,
                                   shape_.input, shape_.batch);
    }
    /// Whether the loss has a term after step k (0 <= k < T).
    [[nodiscard]] bool has_target(step_t k) const noexcept
    {
        return shape_.loss == loss_at::every_step || k + 1 == shape_.steps;
    }
    /// The target after step k (output x B); only where has_target(k).
    [[nodiscard]] dense::matrix_view<const T> target(step_t k) const noexcept
    {
        const std::int64_t at = shape_.loss == loss_at::every_step ? k : 0;
        return dense::dense_matrix(thrust::raw_pointer_cast(targets_.data()) + at * shape_.output * shape_.batch,
                                   shape_.output, shape_.batch);
    }
    /// How many squared errors the loss averages: output x B per term.
    [[nodiscard]] double loss_terms() const noexcept
    {
        const double per = static_cast<double>(shape_.output) * static_cast<double>(shape_.batch);
        return shape_.loss == loss_at::every_step ? per * static_cast<double>(shape_.steps) : per;
    }

private:
    static void check_size(const char* what, std::int64_t value)
    {
        if (value < 1)
            throw argument_error(std::string("sequence ") + what + " " + std::to_string(value) +
                                 " (expected at least 1)");
    }
    template <class U>
    void check_values(const char* what, std::span<const U> values, std::int64_t features, step_t steps) const
    {
        const std::uint64_t expected = static_cast<std::uint64_t>(features) * static_cast<std::uint64_t>(shape_.batch) *
                                       static_cast<std::uint64_t>(steps);
        if (values.size() != expected)
            throw argument_error("sequence " + std::string(what) + ": got " + std::to_string(values.size()) +
                                 " values (expected " + std::to_string(features) + " features x " +
                                 std::to_string(shape_.batch) + " batch x " + std::to_string(steps) +
                                 " steps = " + std::to_string(expected) + ")");
        for (std::size_t i = 0; i < values.size(); ++i)
            if (!std::isfinite(static_cast<double>(values[i]))) {
                const auto per_step = static_cast<std::size_t>(features * shape_.batch);
                throw argument_error(
                    "sequence " + std::string(what) + ": value " + std::to_string(static_cast<double>(values[i])) +
                    " at step " + std::to_string(i / per_step) + ", batch member " +
                    std::to_string(i % per_step / static_cast<std::size_t>(features)) + ", feature " +
                    std::to_string(i % static_cast<std::size_t>(features)) + " (expected a finite number)");
            }
    }

    sequence_shape shape_;
    thrust::device_vector<T> inputs_;
    thrust::device_vector<T> targets_;
};

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::rnn
