"""Module attributes that load on first use (PEP 562), shared by `devplace` and its packages.

A table maps each public name to where it lives: `"pkg.module"` (the module's attribute of that
name) or `"pkg.module:obj"` (an attribute of `obj` in that module, e.g. `tf.constant`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_attributes(
    module_name: str, table: Mapping[str, str], public: list[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for the module `module_name`, resolving names from `table`."""
    namespace = importlib.import_module(module_name).__dict__

    def __getattr__(name: str) -> object:
        """Load a public name on first use and keep it in the module."""
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        module, _, owner = target.partition(":")
        source = importlib.import_module(module)
        value = getattr(getattr(source, owner) if owner else source, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        """The module's names, lazily loaded ones included."""
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__
