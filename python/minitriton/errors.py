"""Exceptions carrying minitriton's diagnostics.

Every error the C library reports comes with a status (MT_ERR_SYNTAX, ...),
a place (line and column, 1-based; 0 when it has none), the message alone
and the GCC-style text:

    kernels.py:12:15: error: unknown name 'c'
        out = a + c
                  ^

str() of the exception is that text.
"""


class MinitritonError(Exception):
    """Base class: .text (GCC-style diagnostic), .message, .status (the
    status name, e.g. "MT_ERR_SHAPE"), .line, .col, .filename."""

    def __init__(self, text, message=None, status=None, line=0, col=0, filename=None):
        super().__init__(text)
        self.text = text
        self.message = message if message is not None else text
        self.status = status
        self.line = line
        self.col = col
        self.filename = filename

    def __str__(self):
        return self.text


class CompileError(MinitritonError, RuntimeError):
    """The kernel's source did not compile (syntax, names, types, shapes,
    unsupported constructs, limits). .line and .col are places in the
    Python file the kernel was written in."""


class RunError(MinitritonError, RuntimeError):
    """A run was refused or failed: an argument of the wrong dtype, shape
    or device, a symbolic dim bound to two sizes, a failed assert, a device
    that is not available (no GPU), out of memory."""
