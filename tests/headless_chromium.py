"""Headless Chromium driven through its DevTools protocol on a pipe (`--remote-debugging-pipe`):
open a page and evaluate JavaScript in it, standard library only. Every wait has a deadline."""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

#: The Chromium on PATH (Debian's package `chromium`), or None.
CHROMIUM = next(
    (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
    None,
)


class Chromium:
    """A headless Chromium with a fresh profile in `profile`; a context manager that kills it."""

    def __init__(self, profile: Path, binary: str | None = CHROMIUM) -> None:
        assert binary, "no Chromium on PATH: install Debian's package `chromium`"
        to_child, self._commands = os.pipe()
        self._replies, from_child = os.pipe()
        # Above fd 4, so that moving them to fds 3 and 4 in the child clobbers neither.
        to_child, from_child = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child, from_child))

        def on_fds_3_and_4() -> None:  # where Chromium reads commands and writes replies
            os.dup2(to_child, 3)
            os.dup2(from_child, 4)

        self.process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
            + ["--window-size=1400,900", "--remote-debugging-pipe", f"--user-data-dir={profile}"]
            + ["about:blank"],
            pass_fds=(3, 4),
            preexec_fn=on_fds_3_and_4,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child)
        os.close(from_child)
        self._unread, self._last_id, self._session = b"", 0, None

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        os.close(self._commands)
        os.close(self._replies)

    def call(self, method: str, timeout: float = 60.0, **params: Any) -> dict[str, Any]:
        """Send one DevTools command (to the open page, once there is one); its result."""
        self._last_id += 1
        message: dict[str, Any] = {"id": self._last_id, "method": method, "params": params}
        if self._session:
            message["sessionId"] = self._session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._unread:
                raw, self._unread = self._unread.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._last_id:
                    if "error" in reply:
                        raise RuntimeError(f"Chromium {method}: {reply['error']}")
                    return reply["result"]
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"Chromium gave no answer to {method} in {timeout} s")
            if select.select([self._replies], [], [], left)[0]:
                chunk = os.read(self._replies, 1 << 16)
                if not chunk:
                    raise RuntimeError(f"Chromium exited (status {self.process.poll()})")
                self._unread += chunk

    def open(self, url: str, timeout: float = 60.0) -> None:
        """Open `url` in a new page, where `evaluate` then runs, once the page has loaded."""
        target = self.call("Target.createTarget", url=url)["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        # A page just created may still be about:blank or half parsed (no documentElement yet).
        loaded = "document.URL !== 'about:blank' && document.readyState === 'complete'"
        deadline = time.monotonic() + timeout
        while not self.evaluate(loaded):
            if time.monotonic() > deadline:
                raise TimeoutError(f"Chromium did not load {url} in {timeout} s")
            time.sleep(0.2)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the open page (JSON-like values)."""
        reply = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"JavaScript error: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def click(self, x: float, y: float) -> None:
        """A left mouse click at (`x`, `y`) of the page's viewport, as a user's: the element
        drawn there gets it, through the page's own event handlers."""
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for event in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=event, x=x, y=y, button="left", clickCount=1)
