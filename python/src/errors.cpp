// C++ remat::error kinds become the Python exceptions of remat/_errors.py (each derived from remat.Error),
// carrying the library's message.
#include "bindings.hpp"

#include "remat/error.hpp"

#include <exception>

namespace remat::python {
namespace {

// The classes live in Python: they derive from both remat.Error and a built-in exception (ValueError,
// OverflowError, ...), which nanobind's own exception types cannot.
void set_error(const char* name, const std::exception& e) noexcept
{
    try {
        const nb::object cls = nb::module_::import_("remat._errors").attr(name);
        PyErr_SetString(cls.ptr(), e.what());
    } catch (nb::python_error& failed) { // remat._errors could not be imported: say that instead
        failed.restore();
    }
}

void translate(const std::exception_ptr& p, void*)
{
    try {
        std::rethrow_exception(p);
    } catch (const argument_error& e) {
        set_error("ArgumentError", e);
    } catch (const overflow_error& e) {
        set_error("CountOverflowError", e);
    } catch (const schedule_error& e) {
        set_error("ScheduleError", e);
    } catch (const capacity_error& e) {
        set_error("CapacityError", e);
    } catch (const io_error& e) {
        set_error("IoError", e);
    } catch (const integrity_error& e) {
        set_error("IntegrityError", e);
    } catch (const error& e) {
        set_error("Error", e);
    } // anything else goes on to nanobind's own translators
}

} // namespace

void bind_errors(nb::module_&)
{
    nb::register_exception_translator(translate);
}

} // namespace remat::python
