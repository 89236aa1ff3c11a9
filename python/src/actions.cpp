// The five actions as small immutable Python values: remat.Advance, Store, Restore, Free, Reverse. Each has
// a class attribute `kind`, its fields read-only, `==`, hash, and str() equal to the line
// `remat plan --format actions` prints.
#include "bindings.hpp"

#include "remat/error.hpp"

#include <nanobind/operators.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <variant>

namespace remat::python {
namespace {

void check_non_negative(const char* what, std::int64_t value)
{
    if (value < 0)
        throw argument_error(std::string(what) + ": expected a value >= 0, got " + std::to_string(value));
}

// A field of an action as Python gives it: an int (not a bool) that fits T, >= 0. Taken as a handle, not a
// T, because nanobind refuses a str or an int past T with a TypeError listing C++ signatures that names
// neither the field nor the value.
// A bool of any kind: Python's, numpy's or a bool tensor (the latter two have an __index__: True read as 1).
bool is_bool(nb::handle value)
{
    if (PyBool_Check(value.ptr()))
        return true;
    if (!nb::hasattr(value, "dtype"))
        return false;
    const nb::object dtype = nb::steal(PyObject_Str(value.attr("dtype").ptr()));
    if (!dtype.is_valid())
        throw nb::python_error();
    const char* name = PyUnicode_AsUTF8(dtype.ptr());
    if (name == nullptr)
        throw nb::python_error();
    return std::string_view(name) == "bool" || std::string_view(name) == "torch.bool";
}

template <class T = std::int64_t>
T field(const char* what, nb::handle value)
{
    if (is_bool(value) || !PyIndex_Check(value.ptr()))
        throw argument_error(std::string(what) + ": expected an int, got " + nb::type_name(value.type()).c_str() + " " +
                             nb::repr(value).c_str());
    const nb::object index = nb::steal(PyNumber_Index(value.ptr()));
    if (!index.is_valid())
        throw nb::python_error();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0 || v > std::numeric_limits<T>::max())
        throw overflow_error(std::string(what) + ": " + nb::repr(value).c_str() + " does not fit " +
                             std::to_string(std::numeric_limits<T>::digits + 1) + " bits");
    check_non_negative(what, v);
    return static_cast<T>(v);
}

bool flag(const char* what, nb::handle value)
{
    if (!PyBool_Check(value.ptr()))
        throw argument_error(std::string(what) + ": expected True or False, got " +
                             nb::type_name(value.type()).c_str() + " " + nb::repr(value).c_str());
    return value.ptr() == Py_True;
}

// The parts every action class shares: kind, ==, hash, str, and positional matching in `match`.
template <class A, class... Fields>
void finish(nb::class_<A>& cls, const char* kind, nb::object match_args, Fields... fields)
{
    cls.attr("kind") = kind;
    cls.attr("__match_args__") = match_args;
    cls.def(nb::self == nb::self);
    cls.def(nb::self != nb::self);
    cls.def("__hash__", [fields...](const A& a) { return nb::hash(nb::make_tuple(a.*fields...)); });
    cls.def("__str__", [](const A& a) { return to_string(action{a}); });
}

} // namespace

nb::object to_python(const action& a)
{
    return std::visit([](const auto& x) { return nb::cast(x); }, a);
}

void bind_actions(nb::module_& m)
{
    nb::class_<advance> adv(m, "Advance", "advance A B: run forward steps A..B-1 (taped: one step, keeping its tape)");
    adv.def(
           "__init__",
           [](advance* self, nb::handle start_, nb::handle stop_, nb::handle taped_) {
               const step_t start = field("Advance start", start_);
               const step_t stop = field("Advance stop", stop_);
               const bool taped = flag("Advance taped", taped_);
               if (stop <= start)
                   throw argument_error("Advance: expected stop > start, got " + std::to_string(start) + " " +
                                        std::to_string(stop));
               if (taped && stop != start + 1)
                   throw argument_error("Advance: a taped advance runs one step (stop == start + 1), got " +
                                        std::to_string(start) + " " + std::to_string(stop));
               new (self) advance{start, stop, taped};
           },
           nb::arg("start").none(), nb::arg("stop").none(), nb::arg("taped").none() = false,
           nb::sig("def __init__(self, start: int, stop: int, taped: bool = False) -> None"))
        .def_ro("start", &advance::from, "A: the first step run; x_A is current before")
        .def_ro("stop", &advance::to, "B: x_B is current after")
        .def_ro("taped", &advance::taped, "the step's tape is kept for its reverse")
        .def("__repr__", [](const advance& a) {
            return "Advance(start=" + std::to_string(a.from) + ", stop=" + std::to_string(a.to) +
                   (a.taped ? ", taped=True)" : ")");
        });
    finish(adv, "advance", nb::make_tuple("start", "stop", "taped"), &advance::from, &advance::to, &advance::taped);

    nb::class_<store> sto(m, "Store", "store L S K: copy the current state x_K into slot S of level L");
    sto.def(
           "__init__",
           [](store* self, nb::handle level, nb::handle slot, nb::handle step) {
               new (self)
                   store{field<level_t>("Store level", level), field("Store slot", slot), field("Store step", step)};
           },
           nb::arg("level").none(), nb::arg("slot").none(), nb::arg("step").none(),
           nb::sig("def __init__(self, level: int, slot: int, step: int) -> None"))
        .def_ro("level", &store::level)
        .def_ro("slot", &store::slot)
        .def_ro("step", &store::step)
        .def("__repr__", [](const store& a) {
            return "Store(level=" + std::to_string(a.level) + ", slot=" + std::to_string(a.slot) +
                   ", step=" + std::to_string(a.step) + ")";
        });
    finish(sto, "store", nb::make_tuple("level", "slot", "step"), &store::level, &store::slot, &store::step);

    nb::class_<restore> res(m, "Restore", "restore L S K: the snapshot x_K in slot S of level L becomes current");
    res.def(
           "__init__",
           [](restore* self, nb::handle level, nb::handle slot, nb::handle step) {
               new (self) restore{field<level_t>("Restore level", level), field("Restore slot", slot),
                                  field("Restore step", step)};
           },
           nb::arg("level").none(), nb::arg("slot").none(), nb::arg("step").none(),
           nb::sig("def __init__(self, level: int, slot: int, step: int) -> None"))
        .def_ro("level", &restore::level)
        .def_ro("slot", &restore::slot)
        .def_ro("step", &restore::step)
        .def("__repr__", [](const restore& a) {
            return "Restore(level=" + std::to_string(a.level) + ", slot=" + std::to_string(a.slot) +
                   ", step=" + std::to_string(a.step) + ")";
        });
    finish(res, "restore", nb::make_tuple("level", "slot", "step"), &restore::level, &restore::slot, &restore::step);

    nb::class_<free_slot> fre(m, "Free", "free L S: slot S of level L is no longer needed");
    fre.def(
           "__init__",
           [](free_slot* self, nb::handle level, nb::handle slot) {
               new (self) free_slot{field<level_t>("Free level", level), field("Free slot", slot)};
           },
           nb::arg("level").none(), nb::arg("slot").none(),
           nb::sig("def __init__(self, level: int, slot: int) -> None"))
        .def_ro("level", &free_slot::level)
        .def_ro("slot", &free_slot::slot)
        .def("__repr__", [](const free_slot& a) {
            return "Free(level=" + std::to_string(a.level) + ", slot=" + std::to_string(a.slot) + ")";
        });
    finish(fre, "free", nb::make_tuple("level", "slot"), &free_slot::level, &free_slot::slot);

    nb::class_<reverse> rev(m, "Reverse", "reverse K: the adjoint of step K; x_K must be current");
    rev.def(
           "__init__", [](reverse* self, nb::handle step) { new (self) reverse{field("Reverse step", step)}; },
           nb::arg("step").none(), nb::sig("def __init__(self, step: int) -> None"))
        .def_ro("step", &reverse::step)
        .def("__repr__", [](const reverse& a) { return "Reverse(step=" + std::to_string(a.step) + ")"; });
    finish(rev, "reverse", nb::make_tuple("step"), &reverse::step);

    m.def(
        "parse_action", [](const std::string& line) { return to_python(parse_action(line)); }, nb::arg("line"),
        "The action of one line of `remat plan --format actions`; remat.ArgumentError when it is not one.");
}

} // namespace remat::python
