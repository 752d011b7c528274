"""Exceptions: one class per libleir status, built from the status a call
returned and the per-thread last-error record (message, rule, subject,
line, column)."""

from __future__ import annotations

import ctypes
from typing import Callable, Dict, Optional, Type

from . import _lib

__all__ = [
    "LeirError",
    "ParseError",
    "InvalidProgramError",
    "ArgumentError",
    "ShapeError",
    "LeirMemoryError",
    "LeirIOError",
    "LimitError",
    "SignatureError",
    "NotApplicableError",
    "CompileError",
    "LeirRuntimeError",
    "LeirTimeoutError",
    "NoDeviceError",
    "UnsupportedError",
    "NotFoundError",
    "CancelledError",
    "InternalError",
]


class LeirError(Exception):
    """A libleir call failed.

    Attributes: ``status`` (the C status, a negative int), ``status_name``
    ("LEIR_ERR_PARSE", ...), ``message``, ``rule`` ("parse.expected",
    "check.bounds", "run.buffer-size", ...; "" when none), ``subject`` (the
    tensor, loop, strategy or file concerned; "" when none), ``line`` and
    ``column`` (1-based; 0 when unknown)."""

    status: int = -16

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        rule: str = "",
        subject: str = "",
        line: int = 0,
        column: int = 0,
    ) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status
        self.message = message
        self.rule = rule
        self.subject = subject
        self.line = line
        self.column = column

    @property
    def status_name(self) -> str:
        return _lib.text(_lib.leir_status_name(self.status))

    def __str__(self) -> str:
        where = f"{self.line}:{self.column}: " if self.line else ""
        rule = f" [{self.rule}]" if self.rule else ""
        return f"{where}{self.message}{rule}"


class ParseError(LeirError, ValueError):
    """Malformed LEIR text, step text or YAML (``line``, ``column`` and
    ``rule`` say where and what)."""

    status = -1


class InvalidProgramError(LeirError, ValueError):
    """The program failed a static check (spec/leir.md §3.6)."""

    status = -2


class ArgumentError(LeirError, ValueError):
    """An invalid argument: wrong buffer size, unknown option value, ..."""

    status = -3


class ShapeError(ArgumentError):
    """An array does not have the shape (or element count) the program's
    signature declares; raised before anything runs."""


class LeirMemoryError(LeirError, MemoryError):
    status = -4


class LeirIOError(LeirError, OSError):
    status = -5


class LimitError(LeirError, ValueError):
    """A configured limit (input size, nesting depth, iterations, buffer
    bytes) was exceeded."""

    status = -6


class SignatureError(LeirError, ValueError):
    status = -7


class NotApplicableError(LeirError, ValueError):
    """The step is not a candidate of the program (``rule`` names the
    failed precondition)."""

    status = -8


class CompileError(LeirError):
    """The backend's compiler rejected the lowered code (``log`` holds its
    output when known)."""

    status = -9
    log: str = ""


class LeirRuntimeError(LeirError, RuntimeError):
    """The program crashed, trapped (bounds, integer division by zero) or
    ran out of memory while running."""

    status = -10


class LeirTimeoutError(LeirError, TimeoutError):
    status = -11


class NoDeviceError(LeirError):
    status = -12


class UnsupportedError(LeirError):
    status = -13


class NotFoundError(LeirError, LookupError):
    """Unknown strategy, backend or name (the message suggests the closest
    one when there is one)."""

    status = -14


class CancelledError(LeirError):
    status = -15


class InternalError(LeirError):
    status = -16


_BY_STATUS: Dict[int, Type[LeirError]] = {
    cls.status: cls
    for cls in (
        ParseError,
        InvalidProgramError,
        ArgumentError,
        LeirMemoryError,
        LeirIOError,
        LimitError,
        SignatureError,
        NotApplicableError,
        CompileError,
        LeirRuntimeError,
        LeirTimeoutError,
        NoDeviceError,
        UnsupportedError,
        NotFoundError,
        CancelledError,
        InternalError,
    )
}


def error_for(st: int, before: Optional[int] = None) -> LeirError:
    """The exception for a failed call that returned `st`. The last-error
    record is used only when it belongs to that call: its status equals
    `st` and (when the library has leir_error_sequence and `before` was
    taken before the call) its sequence moved. Otherwise the message is the
    status's generic one, never a stale record's."""
    cls = _BY_STATUS.get(st, InternalError)
    rec = _lib.leir_error_last().contents
    fresh = rec.status == st
    if fresh and before is not None and _lib.leir_error_sequence is not None:
        fresh = _lib.leir_error_sequence() != before
    if not fresh:
        return cls(_lib.text(_lib.leir_status_message(st)), status=st)
    return cls(
        _lib.text(rec.message) or _lib.text(_lib.leir_status_message(st)),
        status=st,
        rule=_lib.text(rec.rule),
        subject=_lib.text(rec.subject),
        line=int(rec.line),
        column=int(rec.column),
    )


def call(fn: Callable[..., int], *args: object) -> None:
    """Calls a libleir function that returns a status; raises the matching
    :class:`LeirError` when it is not LEIR_OK. The record is cleared first,
    so a stale error from an earlier call can never be reported."""
    _lib.leir_error_clear()
    before = _lib.leir_error_sequence() if _lib.leir_error_sequence is not None else None
    st = fn(*args)
    if st != 0:
        raise error_for(st, before)


def out_ptr() -> ctypes.c_void_p:
    return ctypes.c_void_p()
