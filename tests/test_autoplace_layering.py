"""The autoplacer's timing, measuring and profiling modules import one way: api -> profiles ->
measure -> timing, never back (at module level or inside a function)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python/devplace/autoplacer"
ORDER = ["api", "profiles", "measure", "timing"]


def imported(module: str) -> set[str]:
    """The autoplacer modules `module` imports anywhere in its file."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "devplace.autoplacer."
        ):
            found.add(node.module.split(".")[2])
    return found


@pytest.mark.parametrize("k", range(len(ORDER)))
def test_no_module_imports_one_above_it(k):
    above = set(ORDER[:k])
    assert not imported(ORDER[k]) & above, f"{ORDER[k]} imports {imported(ORDER[k]) & above}"
