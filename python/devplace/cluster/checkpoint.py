"""Checkpoints of a cluster's variables: on demand, every N steps, and restored after a restart.

A restarted ps task comes back empty. `Checkpointer.reconnect` makes a new session (retrying
until the cluster answers, within a deadline), restores the variables from the last checkpoint
and returns the step it was taken at, so training continues from those values.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from devplace.adapter._tf import tf
from devplace.cluster.errors import PEER_FAILURES
from devplace.core.atomic import FileWriteError

__all__ = ["Checkpointer"]

_STEP = re.compile(r"-(\d+)$")


class Checkpointer:
    """A `tf.compat.v1.train.Saver` over the graph's variables, saving into `directory`.

    every: with `after_step`, save when the step is a multiple of `every` (None: on demand).
    sharded: each ps task writes its own variables (TF's layout for parameter servers).
    Build it after the variables, while their graph is the default (or pass `graph`).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        every: int | None = None,
        var_list: Any = None,
        max_to_keep: int = 5,
        sharded: bool = True,
        graph: Any = None,
        prefix: str = "model.ckpt",
    ):
        if every is not None and (isinstance(every, bool) or int(every) < 1):
            raise ValueError(
                f"Checkpointer: every must be a positive number of steps, got {every!r}"
            )
        self.every = None if every is None else int(every)
        self.directory = Path(directory).absolute()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.prefix = prefix
        graph = graph if graph is not None else tf.get_default_graph()
        with graph.as_default(), tf.device(None):
            self.saver = tf.train.Saver(var_list=var_list, max_to_keep=max_to_keep, sharded=sharded)
        self.last_saved_step: int | None = None

    def save(self, sess: Any, step: int) -> str:
        """Save every variable now, as the checkpoint of `step`; returns its path.

        A checkpoint that cannot be written (a full disk, the folder gone) raises
        `FileWriteError` naming it; a cluster task that is unreachable raises TF's error."""
        prefix = str(self.directory / self.prefix)
        try:
            path = self.saver.save(sess, prefix, global_step=int(step), write_meta_graph=False)
        except PEER_FAILURES:
            raise
        except (OSError, ValueError, tf.errors.OpError) as err:
            if isinstance(err, ValueError) and self.directory.is_dir():
                raise  # a bad argument; TF's ValueError for the write is "no parent directory"
            said = (getattr(err, "message", None) or str(err)).splitlines()
            # TF's graph-error text ends with the cause, then the node (`[[{{node ...}}]]`)
            lines = [ln.strip() for ln in said if ln.strip() and "[[" not in ln]
            reason = lines[-1] if lines else repr(err)
            raise FileWriteError(
                f"cannot write checkpoint {f'{prefix}-{int(step)}'!r}: {reason}. "
                f"Hint: make {str(self.directory)!r} a folder you can write to, on a disk "
                "with free space"
            ) from err
        self.last_saved_step = int(step)
        return str(path)

    def after_step(self, sess: Any, step: int) -> str | None:
        """Call after each training step: saves when `step` is a multiple of `every`."""
        if self.every is None or int(step) % self.every or step == self.last_saved_step:
            return None
        return self.save(sess, step)

    def latest(self) -> str | None:
        """The path of the newest checkpoint, or None."""
        return tf.train.latest_checkpoint(str(self.directory))

    def latest_step(self) -> int | None:
        """The step of the newest checkpoint, or None."""
        path = self.latest()
        found = _STEP.search(path) if path else None
        return int(found.group(1)) if found else None

    def restore(self, sess: Any) -> int | None:
        """Load the newest checkpoint into the variables; its step, or None if there is none."""
        path = self.latest()
        if path is None:
            return None
        self.saver.restore(sess, path)
        return self.latest_step()

    def restore_or_init(self, sess: Any) -> int:
        """Restore the newest checkpoint, or initialise every variable if there is none.

        Returns the step to continue from (0 for a fresh start).
        """
        step = self.restore(sess)
        if step is not None:
            return step
        with sess.graph.as_default():
            init = tf.global_variables_initializer()
        sess.run(init)
        return 0

    def reconnect(
        self, make_session: Callable[[], Any], timeout: float = 60.0, interval: float = 0.5
    ) -> tuple[Any, int]:
        """A new session from `make_session()` with the variables restored, and its step.

        Retries while the cluster is unreachable (a task still restarting) for up to `timeout`
        seconds, then raises the last error. Each attempt is bounded by the new session's own
        timeout, so the whole call ends within `timeout` plus that.
        """
        deadline = time.monotonic() + float(timeout)
        while True:
            sess = make_session()
            try:
                return sess, self.restore_or_init(sess)
            except PEER_FAILURES:
                sess.close()
                if time.monotonic() + interval > deadline:
                    raise
                time.sleep(interval)
