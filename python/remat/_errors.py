"""The exceptions of remat: one root, remat.Error, and one subclass per kind of C++ remat::error.

Where a built-in exception means the same, they derive from it too (ValueError for a bad argument,
OverflowError for a count beyond 64 bits, OSError for I/O). Each carries the library's message unchanged.
"""


class Error(Exception):
    """Root of every exception remat raises (C++ remat::error)."""


class ArgumentError(Error, ValueError):
    """A value outside what the function accepts: zero steps, zero slots, a malformed action (remat::argument_error)."""


class CountOverflowError(Error, OverflowError):
    """A count or size that does not fit 64 bits; remat never wraps silently (remat::overflow_error)."""


class ScheduleError(Error):
    """An action stream that breaks the schedule contract (remat::schedule_error)."""


class CapacityError(Error):
    """A budget or level too small: no schedule fits it (remat::capacity_error)."""


class IoError(Error, OSError):
    """An operating-system or HDF5 I/O call failed (remat::io_error)."""


class IntegrityError(Error):
    """A stored snapshot failed its integrity checks (remat::integrity_error)."""


class UnavailableError(Error):
    """A part of remat this installation was built without (the HDF5 level when HDF5 was not found)."""


class BackwardError(Error, RuntimeError):
    """A backward remat.torch refuses, as plain autograd refuses it (hence also a RuntimeError): double backward
    (create_graph=True) through re-run steps or blocks, a second backward through the same forward, and a
    state it would re-run from (x_0 included) modified in place since the forward stored it."""
