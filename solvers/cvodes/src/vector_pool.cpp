// The pooled serial N_Vector: a serial vector (every serial operation works on it unchanged) whose content
// also names its pool and its array's place there, with its own clone and destroy operations.
#include "vector_pool.hpp"

#include "serial_kernels.hpp"

#include <cassert>
#include <cstdlib>
#include <limits>
#include <new>

namespace remat::cvodes::detail {
namespace {

constexpr std::size_t own_array = std::numeric_limits<std::size_t>::max(); // not from a shelf

// The serial content first, so the serial operations see a serial vector; then the pool.
struct pooled_content {
    _N_VectorContent_Serial serial;
    vector_pool* pool;
    std::size_t index; // the array's place on its shelf, or own_array
};

pooled_content* content_of(N_Vector v) noexcept
{
    return static_cast<pooled_content*>(v->content);
}

void pooled_destroy(N_Vector v)
{
    if (v == nullptr)
        return;
    if (pooled_content* c = content_of(v)) {
        if (c->serial.own_data == SUNTRUE && c->serial.data != nullptr) {
            if (c->index == own_array)
                delete[] c->serial.data;
            else
                c->pool->give(c->serial.length, c->index);
        }
        delete c;
        v->content = nullptr;
    }
    N_VFreeEmpty(v);
}

// A vector like w, with the same operations and pool, and no array.
N_Vector pooled_clone_empty(N_Vector w)
{
    if (w == nullptr)
        return nullptr;
    N_Vector v = N_VNewEmpty(w->sunctx);
    if (v == nullptr)
        return nullptr;
    if (N_VCopyOps(w, v) != 0) {
        N_VFreeEmpty(v);
        return nullptr;
    }
    const pooled_content* from = content_of(w);
    v->content = new (std::nothrow) pooled_content{{from->serial.length, SUNFALSE, nullptr}, from->pool, own_array};
    if (v->content == nullptr) {
        N_VFreeEmpty(v);
        return nullptr;
    }
    return v;
}

// CVODES reports a null clone as a memory failure, so no exception crosses its C frames.
N_Vector pooled_clone(N_Vector w)
{
    N_Vector v = pooled_clone_empty(w);
    if (v == nullptr)
        return nullptr;
    pooled_content* c = content_of(v);
    try {
        c->serial.data = c->pool->take(c->serial.length, c->index);
    } catch (const std::bad_alloc&) {
        pooled_destroy(v);
        return nullptr;
    }
    c->serial.own_data = SUNTRUE;
    return v;
}

} // namespace

vector_pool::~vector_pool()
{
    assert(arrays_in_use_ == 0 && "a pooled N_Vector outlived its pool");
}

vector_ptr vector_pool::new_vector(std::size_t size, SUNContext ctx)
{
    // A serial vector without an array gives the serial operations; its content is replaced by ours.
    vector_ptr v(check_created(N_VNewEmpty_Serial(static_cast<sunindextype>(size), ctx), "N_VNewEmpty_Serial"));
    auto* c = new pooled_content{{static_cast<sunindextype>(size), SUNFALSE, nullptr}, this, own_array};
    std::free(v->content); // N_VNewEmpty_Serial's content (malloc'd)
    v->content = c;
    v->ops->nvclone = pooled_clone;
    v->ops->nvcloneempty = pooled_clone_empty;
    v->ops->nvdestroy = pooled_destroy;
    use_compiled_kernels(v.get());
    c->serial.data = new double[size];
    c->serial.own_data = SUNTRUE;
    N_VConst(0.0, v.get());
    return v;
}

void vector_pool::restart() noexcept
{
    for (auto& [length, s] : shelves_)
        s.next = 0;
}

double* vector_pool::take(sunindextype length, std::size_t& index)
{
    shelf& s = shelves_[length];
    while (s.next < s.arrays.size() && s.in_use[s.next])
        ++s.next;
    if (s.next == s.arrays.size()) {
        s.arrays.reserve(s.arrays.size() + 1);
        s.in_use.reserve(s.in_use.size() + 1);
        s.arrays.emplace_back(new double[static_cast<std::size_t>(length)]); // cannot throw after the reserves
        s.in_use.push_back(false);
    }
    index = s.next++;
    s.in_use[index] = true;
    ++arrays_in_use_;
    return s.arrays[index].get();
}

void vector_pool::give(sunindextype length, std::size_t index) noexcept
{
    shelves_.find(length)->second.in_use[index] = false;
    --arrays_in_use_;
}

} // namespace remat::cvodes::detail
