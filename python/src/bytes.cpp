// remat::parse_bytes for Python: remat.parse_bytes reads a text's bytes with the `remat` tool's own parser.
#include "bindings.hpp"

#include "remat/bytes.hpp"

#include <nanobind/stl/string.h>

#include <string>

namespace remat::python {

void bind_bytes(nb::module_& m)
{
    m.def(
        "parse_bytes", [](const std::string& text, const std::string& what) { return parse_bytes(text, what); },
        nb::arg("text"), nb::arg("what"),
        "The bytes of a text such as \"8GiB\" (remat::parse_bytes, as the tool reads its options); "
        "remat.ArgumentError or remat.CountOverflowError naming `what`.");
}

} // namespace remat::python
