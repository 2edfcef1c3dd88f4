"""Exceptions raised by gramask: one class per C status code (``gm_status``).

Every exception from the C library is a :class:`GramaskError` carrying the C
error's message (``str(e)``; for grammar files it starts with
``file:line:column:`` and may show the source line with a caret) and its
location as attributes. Each class also derives from the built-in exception
a Python user would catch for that kind of failure (``ValueError``,
``OSError``, ``MemoryError``...) and, where XGrammar raises ``RuntimeError`` for the
same failure (a malformed grammar, schema or argument), from ``RuntimeError`` too, so code
written for XGrammar catches them. XGrammar's own classes (:class:`InvalidJSONError`,
:class:`DeserializeFormatError`, :class:`DeserializeVersionError`,
:class:`InvalidStructuralTagError`) are here with the same names and bases.
"""

from typing import Optional, Tuple, Type


class GramaskError(Exception):
    """A failure reported by the gramask C library.

    Attributes:
        message: the C library's message (a complete sentence, possibly several lines).
        code: the C ``gm_status`` value.
        status: its short English name ("syntax error", ...).
        file, line, column: where in an input file, when known (line and column from 1).
    """

    def __init__(self, message: str, code: int = 0, file: Optional[str] = None,
                 line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.file = file
        self.line = line
        self.column = column

    @property
    def status(self) -> str:
        from . import _core
        return _core.status_name(self.code)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        return (type(self), (self.message, self.code, self.file, self.line, self.column))


class OutOfMemoryError(GramaskError, MemoryError):
    """An allocation failed (GM_ERR_NOMEM)."""


class LimitError(GramaskError, RuntimeError):
    """A resource limit (states, memory, input size) was hit (GM_ERR_LIMIT)."""


class GrammarSyntaxError(GramaskError, ValueError, RuntimeError):
    """Malformed grammar or regex text (GM_ERR_SYNTAX)."""


class GrammarError(GramaskError, ValueError, RuntimeError):
    """A well-formed grammar that cannot be used: conflicts, undefined symbols (GM_ERR_GRAMMAR)."""


class UnsupportedError(GramaskError, ValueError, RuntimeError):
    """A construct or format gramask does not implement, named in the message (GM_ERR_UNSUPPORTED)."""


class FileError(GramaskError, OSError):
    """A file could not be read or written (GM_ERR_IO)."""


class FormatError(GramaskError, ValueError, RuntimeError):
    """A malformed tokenizer, ids or compiled file (GM_ERR_FORMAT)."""


class ArgumentError(GramaskError, ValueError, RuntimeError):
    """API misuse: a size mismatch, an id out of range... (GM_ERR_ARGUMENT)."""


class RejectedError(GramaskError, ValueError, RuntimeError):
    """Input the grammar does not allow where it had to be (GM_ERR_REJECTED)."""


class StateError(GramaskError, RuntimeError):
    """An operation not valid in the object's state, e.g. after EOS (GM_ERR_STATE)."""


class InvalidJSONError(RuntimeError):
    """Malformed JSON where JSON was expected (XGrammar's class)."""


class DeserializeFormatError(RuntimeError):
    """A serialized object (``deserialize_json``) that is not of the expected shape."""


class DeserializeVersionError(RuntimeError):
    """A serialized object written by another serialization version."""


class InvalidStructuralTagError(RuntimeError):
    """A malformed structural tag (XGrammar's class)."""


# Indexed by gm_status (include/gramask.h); GM_OK has no class.
BY_STATUS: Tuple[Optional[Type[GramaskError]], ...] = (
    None,
    OutOfMemoryError,
    LimitError,
    GrammarSyntaxError,
    GrammarError,
    UnsupportedError,
    FileError,
    FormatError,
    ArgumentError,
    RejectedError,
    StateError,
)
