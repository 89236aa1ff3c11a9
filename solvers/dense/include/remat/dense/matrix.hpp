// remat/dense/matrix.hpp — non-owning views of column-major matrices and of vectors in the memory the
// BLAS of this build reads (GPU memory under CUDA, host memory on the CPU back ends).
//
// Element (i, j) of a matrix view m lives at m.data[i + j * m.ld], as in BLAS and cuBLAS. Views carry
// 64-bit sizes; the BLAS calls check that they fit the library's 32-bit integers.
#pragma once

#include <cstdint>
#include <type_traits>

namespace remat::dense {

/// Whether a BLAS operand is used as stored or transposed.
enum class op : unsigned char { none, transpose };

/// A column-major rows x cols matrix with leading dimension ld (>= rows).
///
///     thrust::device_vector<double> w(out * in);
///     remat::dense::matrix_view<double> W{thrust::raw_pointer_cast(w.data()), out, in, out};
template <class T>
struct matrix_view {
    T* data = nullptr;
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::int64_t ld = 0;

    /// The read-only view of the same elements.
    template <class U = T>
        requires(!std::is_const_v<U>)
    operator matrix_view<const U>() const noexcept // NOLINT: views narrow freely
    {
        return {data, rows, cols, ld};
    }
    /// Columns [first, first + count): a sub-matrix with the same leading dimension.
    [[nodiscard]] matrix_view columns(std::int64_t first, std::int64_t count) const noexcept
    {
        return {data + first * ld, rows, count, ld};
    }
    [[nodiscard]] std::int64_t size() const noexcept { return rows * cols; }
    [[nodiscard]] bool contiguous() const noexcept { return ld == rows || cols <= 1; }
};

/// A contiguous vector of `size` elements.
///
///     remat::dense::vector_view<double> y{thrust::raw_pointer_cast(v.data()), std::int64_t(v.size())};
template <class T>
struct vector_view {
    T* data = nullptr;
    std::int64_t size = 0;

    template <class U = T>
        requires(!std::is_const_v<U>)
    operator vector_view<const U>() const noexcept // NOLINT: views narrow freely
    {
        return {data, size};
    }
    /// The same elements as a dense rows x (size / rows) matrix: a batch of column vectors.
    [[nodiscard]] matrix_view<T> as_matrix(std::int64_t rows) const noexcept
    {
        return {data, rows, rows == 0 ? 0 : size / rows, rows};
    }
    /// Elements [first, first + count).
    [[nodiscard]] vector_view sub(std::int64_t first, std::int64_t count) const noexcept
    {
        return {data + first, count};
    }
};

/// A dense rows x cols matrix over `data` (ld == rows).
///
///     auto W = remat::dense::dense_matrix(ptr, out, in);
template <class T>
[[nodiscard]] matrix_view<T> dense_matrix(T* data, std::int64_t rows, std::int64_t cols) noexcept
{
    return {data, rows, cols, rows};
}

} // namespace remat::dense
