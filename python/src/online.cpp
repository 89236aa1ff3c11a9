// The online schedule for Python (remat.torch's until= form): answers in, actions out, in batches.
#include "bindings.hpp"

#include "remat/schedule/online_revolve.hpp"

namespace remat::python {

void bind_online(nb::module_& m)
{
    using cursor = online_revolve::cursor_type;
    nb::class_<cursor>(m, "OnlineCursor",
                       "One run of remat::online_revolve: at each x_k of the forward sweep answer whether the loop "
                       "goes on (answer(False)) or has ended with x_k (end_state()), then take() the actions")
        .def(
            "__init__", [](cursor* self, slot_t slots) { new (self) cursor(online_revolve(slots).cursor()); },
            nb::arg("slots"))
        .def_prop_ro("awaiting_answer", &cursor::awaiting_answer)
        .def_prop_ro("position", &cursor::position)
        .def_prop_ro("steps", &cursor::steps)
        .def("answer", &cursor::answer, nb::arg("last"))
        .def("end_state", &cursor::end_state)
        .def(
            "take", [](cursor& c, std::size_t size) { return take_batch(c, size); }, nb::arg("size") = 4096,
            "Up to `size` queued actions (fewer, or none, when an answer is awaited or the schedule is done)");
}

} // namespace remat::python
