// remat/store/detail/use_copier.hpp — how a level takes the copier of the store it is part of.
#pragma once

#include "remat/error.hpp"
#include "remat/store/snapshot_view.hpp"

#include <string>

namespace remat::detail {

/// A level's copier becomes the store's: a level built with the default copier takes the store's, one
/// already given the same copier keeps it, and one given another copier is refused (argument_error), so
/// that a copier is never dropped silently. A store made without a copier (its default, host_copy) leaves
/// every level its own: `tiered_store(cuda::device_store(16), host_store(64, cuda::host_level_options()))`
/// works as it reads. A null copier is refused.
inline void use_copier(byte_copier& mine, byte_copier store, const char* level_name)
{
    const std::string name = level_name != nullptr ? level_name : "?";
    if (store.target() == nullptr)
        throw argument_error("the store's copier for level " + name + " has no copy function");
    if (store == host_copy)
        return;
    if (mine != host_copy && mine != store)
        throw argument_error("level " + name +
                             " was given a copier of its own and the store another one; give the copier once, to "
                             "the store (tiered_store(copier, levels...))");
    mine = store;
}

} // namespace remat::detail
