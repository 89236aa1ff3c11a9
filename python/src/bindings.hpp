// The parts of the extension remat._remat, one per file; module.cpp puts them together.
#pragma once

#include "remat/schedule/action.hpp"

#include <nanobind/nanobind.h>

#include <cstddef>

namespace remat::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);
void bind_actions(nb::module_& m);
void bind_plans(nb::module_& m);
void bind_online(nb::module_& m);
void bind_disk_level(nb::module_& m);
void bind_bytes(nb::module_& m);

/// A new Python value object (remat.Advance, remat.Store, ...) for one action.
[[nodiscard]] nb::object to_python(const action& a);

/// Up to `size` actions of `cursor`, as a list of value objects (empty once the cursor has none): one call
/// from Python per batch, not per action.
template <class Cursor>
[[nodiscard]] nb::list take_batch(Cursor& cursor, std::size_t size)
{
    nb::list out;
    action a;
    for (std::size_t i = 0; i < size && cursor.next(a); ++i)
        out.append(to_python(a));
    return out;
}

} // namespace remat::python
