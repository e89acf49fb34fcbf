"""Exception types. Every user mistake raises a subclass of TileLangError whose message gives
file:line:col of the DSL source and the offending line with a caret; compiler bugs raise
TileLangInternalError."""


class TileLangError(Exception):
    """Base of all user-facing errors. ``span`` is (file, line, col) when known."""

    span = None


class TileLangSyntaxError(TileLangError):
    """A construct the DSL does not accept (malformed program, unsupported Python)."""


class TileLangTypeError(TileLangError):
    """Wrong data type, shape or memory scope in a program."""


class TileLangCompileError(TileLangError):
    """Lowering or the native toolchain failed on a valid-looking program."""


class TileLangArgumentError(TileLangError, ValueError):
    """A compiled kernel was called with tensors that do not fit its signature."""


class TileLangUnsupportedError(TileLangError):
    """The program is valid but the chosen target cannot run it."""


class TileLangResourceError(TileLangError):
    """A kernel needs more of a resource (e.g. shared memory) than the target has."""


class TileLangLayoutError(TileLangError):
    """Layout inference found conflicting requirements."""


class TileLangInternalError(Exception):
    """A compiler bug: please report it."""


class TileLangEmulationError(TileLangError):
    """The emulator found what a GPU would not report: out-of-bounds accesses, shared-memory races,
    reads of never-written memory, divergent barriers. ``reports`` lists (kind, message)."""

    reports = ()


class TileLangPerformanceWarning(UserWarning):
    """The compiler took a slower path than the program suggests (e.g. a copy that cannot use cp.async)."""
