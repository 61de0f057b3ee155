"""The fast tier's rule, checked as the tests run (a pytest plugin; conftest.py loads it).

`make test-fast` (`-m "not slow"`) is every module's core behaviour in one Python process. A test
not marked `slow` (`pytestmark = pytest.mark.slow` in its module, or `@pytest.mark.slow` on it)
fails, naming what it started, as soon as it (or a fixture it uses) starts another process (Julia,
a Jupyter kernel, a browser, TensorBoard, `unshare`, a fresh Python), forks, or starts a
TensorFlow server (a cluster): the rule holds in every run, fast or full, whatever the helper.
"""

from __future__ import annotations

import _posixsubprocess
import functools
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

#: The tests running now, innermost last: a fast one's node id, or None for a slow one (a test
#: that runs pytest inside itself nests the inner run's tests over its own).
_running: list[str | None] = []

#: What each fast test started, by node id: its report fails even if the test swallowed the error.
_broken: dict[str, str] = {}


def _refuse(what: str) -> None:
    nodeid = _running[-1] if _running else None
    if nodeid is None:
        return
    message = (
        f"{nodeid} is in the fast tier but started {what}: mark it slow "
        "(`@pytest.mark.slow`, or `pytestmark = pytest.mark.slow` for its module; tests/tiers.py)"
    )
    _broken.setdefault(nodeid, message)
    pytest.fail(message, pytrace=False)


def _guarded(what: Callable[..., str], original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        _refuse(what(*args, **kwargs))
        return original(*args, **kwargs)

    guarded.__wrapped_by_tiers__ = True  # type: ignore[attr-defined]
    return guarded


def _patch(owner: object, name: str, what: Callable[..., str]) -> None:
    original = getattr(owner, name, None)
    if original is not None and not getattr(original, "__wrapped_by_tiers__", False):
        setattr(owner, name, _guarded(what, original))


def _command(popen: subprocess.Popen[Any], args: Any, *_: Any, **__: Any) -> str:
    words = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    return "a process: " + " ".join(os.fsdecode(w) for w in words)[:200]


def _install() -> None:
    """Wrap every way Python starts a process, and TensorFlow's server once it is loaded."""
    _patch(subprocess.Popen, "_execute_child", _command)
    _patch(_posixsubprocess, "fork_exec", lambda *a, **k: "a process (fork_exec)")
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system"):
        _patch(os, name, lambda *a, _name=name, **k: f"a process (os.{_name})")
    server_lib = sys.modules.get("tensorflow.python.training.server_lib")
    if server_lib is not None:
        _patch(server_lib.Server, "__init__", lambda *a, **k: "a TensorFlow server (a cluster)")


def _tier(item: pytest.Item) -> Iterator[None]:
    _install()
    _running.append(None if item.get_closest_marker("slow") else item.nodeid)
    try:
        yield
    finally:
        _running.pop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    yield from _tier(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield from _tier(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield from _tier(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    message = _broken.get(item.nodeid)
    if message is not None and report.passed and report.when == "call":
        report.outcome = "failed"
        report.longrepr = message
