#include "remat/hdf5_internal/hdf5_handle.hpp"

#include <vector>

namespace remat::detail {
namespace {

std::recursive_mutex& hdf5_mutex()
{
    static std::recursive_mutex m;
    return m;
}

struct stack_entry {
    std::string description;
    std::string minor;
};

herr_t collect(unsigned, const H5E_error2_t* e, void* data)
{
    auto& entries = *static_cast<std::vector<stack_entry>*>(data);
    stack_entry entry;
    if (e->desc != nullptr)
        entry.description = e->desc;
    char minor[128] = {};
    if (H5Eget_msg(e->min_num, nullptr, minor, sizeof minor) > 0)
        entry.minor = minor;
    entries.push_back(std::move(entry));
    return 0;
}

} // namespace

std::string hdf5_error_text()
{
    std::vector<stack_entry> entries;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, &entries);
    H5Eclear2(H5E_DEFAULT);
    // Downward: the API call first, the place where the failure was detected last. The innermost
    // entries say what is actually wrong ("truncated file: eof = ..."); the outer ones only repeat
    // "unable to open file". Two innermost entries give the cause and its context.
    std::string text;
    int taken = 0;
    for (auto it = entries.rbegin(); it != entries.rend() && taken < 2; ++it) {
        if (it->description.empty())
            continue;
        if (!text.empty())
            text += "; ";
        text += it->description;
        if (!it->minor.empty())
            text += " [" + it->minor + "]";
        ++taken;
    }
    return text;
}

hdf5_scope::hdf5_scope() : lock_(hdf5_mutex())
{
    // Error printing is a per-thread setting in thread-safe builds of HDF5; save it and silence it.
    if (H5Eget_auto2(H5E_DEFAULT, &saved_func_, &saved_data_) >= 0) {
        restore_ = true;
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    }
    H5Eclear2(H5E_DEFAULT);
}

hdf5_scope::~hdf5_scope()
{
    H5Eclear2(H5E_DEFAULT);
    if (restore_)
        H5Eset_auto2(H5E_DEFAULT, saved_func_, saved_data_);
}

} // namespace remat::detail
