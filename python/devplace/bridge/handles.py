"""The host's handle table: Python objects that Julia holds by number."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from devplace.core.errors import Error

__all__ = ["HandleTable", "UnknownHandleError"]


class UnknownHandleError(Error, KeyError):
    """A handle id that is not (or no longer) in the table."""

    def __str__(self) -> str:
        return (
            f"handle {self.args[0]} is not in the Python host's table: it was released, or it "
            "belongs to an earlier host process; recreate the object"
        )


class HandleTable:
    """Objects by id. Each `put` makes a new id; `release` forgets ids (unknown ids are ignored)."""

    __slots__ = ("_objects", "_next")

    def __init__(self) -> None:
        self._objects: dict[int, Any] = {}
        self._next = 1

    def put(self, obj: Any) -> int:
        """Store `obj`, returning its new id."""
        id = self._next
        self._next = id + 1
        self._objects[id] = obj
        return id

    def get(self, id: int) -> Any:
        """The object stored under `id`."""
        try:
            return self._objects[id]
        except KeyError:
            raise UnknownHandleError(id) from None

    def release(self, ids: Iterable[int]) -> None:
        """Forget `ids`; the objects are freed when nothing else holds them."""
        pop = self._objects.pop
        for id in ids:
            pop(int(id), None)

    def __len__(self) -> int:
        return len(self._objects)
