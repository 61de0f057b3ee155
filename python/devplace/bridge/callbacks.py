"""Julia callables seen from Python, and Julia exceptions raised through them."""

from __future__ import annotations

from typing import Any, Protocol

from devplace.core.errors import Error

__all__ = ["CallbackDepthError", "JuliaError", "JuliaFunction"]


class _Caller(Protocol):
    def call_julia(
        self,
        fn: JuliaFunction,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        op_info: tuple[str, str, str] | None = None,
    ) -> Any: ...

    def call_on_op(self, fn: JuliaFunction, op: Any) -> Any: ...

    def drop_julia(self, id: int) -> None: ...


class JuliaError(Error):
    """A Julia exception thrown inside a Julia callable (or a `@pywith` body).

    `julia_id` numbers the exception on the Julia side, so that Julia can throw the original
    exception again when this error comes back to it (it is shown once, not wrapped per level).
    """

    def __init__(
        self, julia_type: str, message: str, traceback: str = "", julia_id: int | None = None
    ) -> None:
        super().__init__(f"{julia_type}: {message}")
        self.julia_type = julia_type
        self.message = message
        self.julia_traceback = traceback
        self.julia_id = julia_id


class CallbackDepthError(Error, RecursionError):
    """Callbacks into Julia nested deeper than Python's recursion limit leaves room for."""


class JuliaFunction:
    """A Julia function that Python can call; each call is a callback into the Julia process."""

    __slots__ = ("_caller", "id", "name", "__weakref__")

    def __init__(self, caller: _Caller, id: int, name: str) -> None:
        self._caller = caller
        self.id = id
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._caller.call_julia(self, args, kwargs)

    def call_on_op(self, op: Any) -> Any:
        """Call as a device function of `op` (a `tf.Operation`), whose name, type and device the
        Julia function reads without a request (sent along, or read in place in process)."""
        return self._caller.call_on_op(self, op)

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return self.name

    def __repr__(self) -> str:
        return f"<Julia function {self.name}>"

    def __del__(self) -> None:
        self._caller.drop_julia(self.id)
