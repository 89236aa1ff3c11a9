// remat._remat: the C++ planners for Python (docs/python.md). The pure-Python package remat re-exports it.
#include "bindings.hpp"

NB_MODULE(_remat, m)
{
    m.doc() = "remat's C++ planners: schedules, their costs and their actions";
    remat::python::bind_errors(m);
    remat::python::bind_actions(m);
    remat::python::bind_plans(m);
    remat::python::bind_online(m);
    remat::python::bind_disk_level(m);
    remat::python::bind_bytes(m);
}
