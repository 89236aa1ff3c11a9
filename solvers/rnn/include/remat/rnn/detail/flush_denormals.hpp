// remat/rnn/detail/flush_denormals.hpp — subnormal floats as zero inside a model's calls, on an x86 CPU.
//
// A recurrent network's adjoint shrinks step after step (forget gates below 1, small recurrent weights)
// and passes through the subnormal range on its way to zero. x86 cores take a microcode assist for each
// subnormal operand or result, so the backward GEMMs of those steps run many times slower: measured on the
// bench's LSTM (T = 1000, H = 256, B = 64), plain BPTT spent 7.2 s of CPU with subnormals and 2.0 s with
// them flushed (PyTorch's: 8.3 and 2.4 s with torch.set_flush_denormal). The scope sets the calling
// thread's MXCSR flags FTZ (subnormal results become 0) and DAZ (subnormal inputs read as 0), as
// torch.set_flush_denormal(True) does, and puts the previous flags back when it ends. It changes only
// values below 2^-126 (float) or 2^-1022 (double), and the same way on every run: a recomputed step still
// gives its first evaluation's bits.
#pragma once

#include <cstdint>

namespace remat::rnn::detail {

/// While alive and `on`, the calling thread flushes subnormals to zero (x86: MXCSR FTZ and DAZ); elsewhere,
/// and on other threads (a multi-threaded BLAS's own), nothing changes.
class flush_denormals_scope {
public:
    explicit flush_denormals_scope(bool on) noexcept
    {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        if (on) {
            saved_ = __builtin_ia32_stmxcsr();
            __builtin_ia32_ldmxcsr(saved_ | flags);
            active_ = true;
        }
#else
        (void)on;
#endif
    }
    ~flush_denormals_scope()
    {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        if (active_)
            __builtin_ia32_ldmxcsr(saved_);
#endif
    }
    flush_denormals_scope(const flush_denormals_scope&) = delete;
    flush_denormals_scope& operator=(const flush_denormals_scope&) = delete;

    /// MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6) flags.
    static constexpr std::uint32_t flags = 0x8040u;

private:
    std::uint32_t saved_ = 0;
    bool active_ = false;
};

} // namespace remat::rnn::detail
