// remat's HDF5 level for Python: snapshots of tensors (several parts, each a C-contiguous CPU buffer) in one
// HDF5 file, with the level's checksums and records. Without HDF5 the module says so (has_hdf5 = False).
#include "bindings.hpp"

#ifdef REMAT_PYTHON_HDF5
#include "remat/hdf5/hdf5_store.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>
#endif

namespace remat::python {

#ifdef REMAT_PYTHON_HDF5
namespace {

using const_array = nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig>;
using mutable_array = nb::ndarray<nb::device::cpu, nb::c_contig>;

// Byte views of the parts: any dtype, seen through DLPack or the buffer protocol (torch tensors, numpy).
std::vector<const_bytes> const_views(const nb::list& parts)
{
    std::vector<const_bytes> out;
    for (nb::handle part : parts) {
        const auto array = nb::cast<const_array>(part);
        out.push_back(host_bytes(std::span(static_cast<const std::byte*>(array.data()), array.nbytes())));
    }
    return out;
}

std::vector<mutable_bytes> mutable_views(const nb::list& parts)
{
    std::vector<mutable_bytes> out;
    for (nb::handle part : parts) {
        auto array = nb::cast<mutable_array>(part);
        out.push_back(host_bytes(std::span(static_cast<std::byte*>(array.data()), array.nbytes())));
    }
    return out;
}

} // namespace

void bind_disk_level(nb::module_& m)
{
    m.attr("has_hdf5") = true;
    nb::class_<hdf5_store>(m, "DiskLevel", "Snapshots in one HDF5 file (remat::hdf5_store)")
        .def(
            "__init__",
            [](hdf5_store* self, const std::string& path, slot_t slots, bool durable) {
                hdf5_store::options options;
                options.durable_writes = durable;
                new (self) hdf5_store(path, level_capacity{.slots = slots}, options);
            },
            nb::arg("path"), nb::arg("slots"), nb::arg("durable") = false)
        .def(
            "write",
            [](hdf5_store& s, slot_t slot, step_t step, const nb::list& parts) {
                const std::vector<const_bytes> views = const_views(parts);
                nb::gil_scoped_release unlocked;
                s.write(slot, step, const_parts(views));
            },
            nb::arg("slot"), nb::arg("step"), nb::arg("parts"))
        .def(
            "read",
            [](hdf5_store& s, slot_t slot, step_t step, const nb::list& parts) {
                const std::vector<mutable_bytes> views = mutable_views(parts);
                nb::gil_scoped_release unlocked;
                s.read(slot, step, mutable_parts(views));
            },
            nb::arg("slot"), nb::arg("step"), nb::arg("parts"))
        .def("release", &hdf5_store::release, nb::arg("slot"))
        .def("snapshot_step", &hdf5_store::snapshot_step, nb::arg("slot"))
        .def("close", &hdf5_store::close)
        .def_prop_ro("path", [](const hdf5_store& s) { return s.path().string(); });
}
#else
void bind_disk_level(nb::module_& m)
{
    m.attr("has_hdf5") = false;
}
#endif

} // namespace remat::python
