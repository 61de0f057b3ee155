"""Sessions whose placement options are keyword arguments, and clear placement errors."""

from __future__ import annotations

import inspect
import logging
import re
import sys
import time
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from devplace.adapter._fdcapture import capture_fds
from devplace.adapter._tf import device_scope_sites, session_config, tf
from devplace.adapter._tflog import quiet_tf_log
from devplace.adapter.devices import (
    Device,
    DeviceSpecError,
    canonical_device,
    matches,
    parse_device,
    short_device,
)
from devplace.adapter.feeds import accepts_feed_dict
from devplace.adapter.gpu_memory import note_session
from devplace.adapter.session_options import (
    SessionOptionTypeError,
    build_config,
    check_target,
    options_doc,
    signature,
)
from devplace.adapter.values import to_python
from devplace.core.errors import ArgumentTypeError, ArgumentValueError, Error
from devplace.core.printed import names

__all__ = [
    "DEFAULT_REMOTE_TIMEOUT",
    "REFUSED_WAIT_S",
    "DevicePlacementError",
    "PlacementLogElsewhereError",
    "Session",
    "check_session",
    "close_sessions",
    "fetch_ops",
    "init",
    "needed_ops",
    "placement_log",
    "run",
]

log = logging.getLogger("devplace.placement")

#: Seconds a session on a `grpc://` target waits for any operation unless told otherwise:
#: a hung peer otherwise blocks `run` forever.
DEFAULT_REMOTE_TIMEOUT = 60.0
#: Seconds a `grpc://` master that refuses connections gets to start listening before a run
#: fails (TF itself would wait for the whole timeout).
REFUSED_WAIT_S = 2.0

_PLACEMENT_LINE = re.compile(r"^(?P<op>\S+): \((?P<type>\w+)\): (?P<device>/\S+)$")


class DevicePlacementError(Error, tf.errors.InvalidArgumentError):
    """An op could not be put on the device it asked for (no such device, or no kernel)."""

    def __init__(
        self,
        op: str,
        requested: str,
        available: list[str],
        original: Any,
        soft: bool = False,
        context: str = "",
    ):
        self.op_name = op
        self.requested = requested
        self.available = available
        self.original = original
        reason, hint = _placement_reason(original.message, requested, available, soft)
        message = (
            f"cannot place op {op!r} on {requested or 'the device it was colocated with'}: "
            f"{reason}. Available devices: {', '.join(available)}. {hint}{context}"
        )
        super().__init__(original.node_def, original.op, message)


_FALL_BACK = (
    "Pin it to one of those, or pass soft=True to Session to let TensorFlow fall back "
    "(dp.placement shows where it lands)."
)
_PIN = (
    "Soft placement is on and could not move it: pin it (and the ops colocated with it) to "
    "one of those devices."
)


def _missing_host(requested: str, available: list[str]) -> str:
    """The job/replica/task part of `requested` when no available device has it, else ''."""
    if not requested:
        return ""
    wanted = parse_device(requested)
    host = Device(wanted.job, wanted.replica, wanted.task)
    if host == Device() or any(matches(host, device) for device in available):
        return ""
    return str(host)


def _placement_reason(
    message: str, requested: str, available: list[str], soft: bool
) -> tuple[str, str]:
    """Why TF could not place an op, and what to do about it given the session's options."""
    fall_back = _PIN if soft else _FALL_BACK
    if "No OpKernel was registered" in message:
        devices = re.search(r"Registered devices: \[([^\]]*)\]", message)
        kinds = devices.group(1) if devices else "any device"
        return (
            f"this TensorFlow build has no kernel for the op on {kinds}",
            "No device here can run it, soft placement included: use another op, or a "
            "TensorFlow build and machine with a device that has its kernel.",
        )
    if host := _missing_host(requested, available):
        return (
            f"this session has no {host} (soft placement cannot change the job or task)",
            "Pin it to one of those devices, or run it in a session on a cluster that has "
            f"{host}: dp.ClusterSession(cluster, job=..., task=...) or "
            "dp.Session(target='grpc://HOST:PORT').",
        )
    if "CUDA is not enabled" in message or "appears to be a GPU" in message:
        return "this TensorFlow build sees no GPU", fall_back
    if "no supported kernel" in message:
        return "the op has no kernel for that device type", fall_back
    if "incompatible device" in message:
        return "it is colocated with ops that require an incompatible device", fall_back
    if "available devices are" in message:
        kind = parse_device(requested).device_type if requested else None
        if kind and not any(matches(f"/device:{kind}:*", d) for d in available):
            return f"this session has no {kind} device", fall_back
        return "no such device exists in this session", fall_back
    return message.strip().splitlines()[-1], fall_back


def _made_at(op: Any) -> str:
    """Where the user's code made `op` (`file:line`): the innermost frame outside TensorFlow's
    and devplace's code; for an op made from Julia (no such frame), the innermost device scope
    the user opened around it (Julia's `@pywith`, `@cpu`, ... say where); else ''."""
    from devplace.bridge.error_text import internal, internal_dirs

    dirs = internal_dirs()
    frames = [(f.filename, f.lineno) for f in reversed(list(getattr(op, "traceback", None) or ()))]
    for file, line in (*frames, *device_scope_sites(op)):
        if file and not internal(file, dirs):
            return f"{file}:{line}"
    return ""


def _op_at(op: Any) -> str:
    """`'name' on DEVICE (made at file:line)`."""
    where = _made_at(op)
    return f"{op.name!r} on {op.device}" + (f" (made at {where})" if where else "")


def _cannot_place(op: Any, available: list[str], soft: bool) -> bool:
    """Whether `op`'s device request fits no available device (soft placement moves it within
    the session's job and task, never to another)."""
    if not op.device:
        return False
    try:
        if _missing_host(op.device, available):
            return True
        return not soft and not any(matches(op.device, d) for d in available)
    except DeviceSpecError:
        return True


def _placement_context(
    graph: Any,
    failed: str,
    fetches: Any,
    feed: Any,
    available: list[str],
    soft: bool,
    no_kernel: bool,
) -> str:
    """What the first failure TensorFlow names leaves out: whether the op is needed for the
    fetches, where it was made, every op that cannot be placed, and how to recover (soft
    placement only where it helps: not on, and not an op without a kernel here)."""
    try:
        op = graph.get_operation_by_name(failed)
    except KeyError:
        return ""
    lines = []
    try:
        fed = frozenset(getattr(key, "name", str(key)) for key in feed or ())
        needed = needed_ops(fetch_ops(graph, fetches), fed)
    except (TypeError, ValueError, KeyError):
        needed = {failed}
    if failed not in needed:
        lines.append(
            f"{failed!r} is not among the fetches nor needed by them: TensorFlow places the "
            "whole graph at its first run, so every run of this graph fails while it is there."
        )
    bad = [o for o in graph.get_operations() if o is op or _cannot_place(o, available, soft)]
    lines.append(f"Ops that cannot be placed ({len(bad)}): {names([_op_at(o) for o in bad])}.")
    fall_back = "" if soft or no_kernel else " or make the Session with soft=True"
    lines.append(
        f"To recover, pin them to an available device{fall_back}; or build the model again "
        "without them in a fresh graph (`with tf.Graph().as_default():`, or "
        "tf.reset_default_graph()) and a new Session."
    )
    return "\n" + "\n".join(lines)


def fetch_ops(graph: Any, fetches: Any) -> list[Any]:
    """The ops of `fetches` (tensors, ops or their names, nested) in `graph`."""
    ops = []
    for fetch in tf.nest.flatten(fetches):
        element = graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        ops.append(element if isinstance(element, tf.Operation) else element.op)
    return ops


def needed_ops(ops: list[Any], fed: frozenset[str]) -> set[str]:
    """The ops a run of `ops` needs: their inputs' ops, recursively, up to the `fed` tensors
    (a fed tensor's op does not run: the feed takes its place)."""
    seen: set[str] = set()
    stack = list(ops)
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        stack.extend(t.op for t in op.inputs if t.name not in fed)
        stack.extend(op.control_inputs)
    return seen


def _unplaceable_op(message: str) -> str | None:
    """The op a placement failure names, or None for other errors."""
    for pattern in (
        r"Cannot assign a device for operation ([^:\s]+)",
        r"No OpKernel was registered to support Op '[^']+' used by \{\{node ([^}]+)\}\}",
    ):
        found = re.search(pattern, message)
        if found:
            return found.group(1)
    return None


def _requested_device(message: str) -> str:
    for pattern in (
        r"explicitly assigned to (\S+?) but",
        r"explicit device specification '([^']*)'",
        r"incompatible device '([^']*)'",
    ):
        found = re.search(pattern, message)
        if found and found.group(1):
            return canonical_device(found.group(1))
    return ""


class Session(tf.Session):
    """A `tf.compat.v1.Session` configured by keyword arguments (all keyword-only).

    Options (`devplace.adapter.session_options.OPTIONS`; a wrong type or range raises
    `SessionOptionError` naming the option):
      {options}
    target: None or '' for an in-process session, or `grpc://HOST:PORT`.
    config: a `tf.ConfigProto` the options are applied on top of (it is copied, not changed).
    graph: the graph to run (default: the default graph).

    GPU memory options are fixed by the process's first session; a later session asking for
    others gets a `GpuMemoryOptionsWarning` once.
    """

    # tf.Session.__del__ reads it, also when __init__ never ran (a bad keyword argument).
    _session = None
    # Probe a grpc:// master before the next run: at the first, and after a peer failure.
    _probe_master = True
    _is_remote = False

    def __init__(
        self,
        *positional: Any,
        target: str | None = None,
        config: Any = None,
        graph: Any = None,
        **options: Any,
    ):
        if positional:
            raise ArgumentTypeError(
                "Session",
                "its arguments",
                positional,
                "keyword arguments",
                "name each one, e.g. dp.Session(cpus=2, target='grpc://HOST:PORT'); "
                "tf.Session's positional (target, graph, config) are keywords here too",
            )
        target = check_target(target)
        if options.get("timeout") is None and target.startswith("grpc://"):
            options["timeout"] = DEFAULT_REMOTE_TIMEOUT
        if graph is not None and not isinstance(graph, tf.Graph):
            raise SessionOptionTypeError(
                "graph", graph, "a tf.Graph or None", "leave it out to run the default graph"
            )
        proto = build_config(options, config)
        self.placement_lines: list[str] = []
        self._log_placement = proto.log_device_placement
        self._captured(lambda: super(Session, self).__init__(target, graph=graph, config=proto))
        self._is_remote = target.startswith("grpc://")
        if self._is_remote:
            _REMOTE_SESSIONS.add(self)
        else:
            note_session(proto, options)

    __init__.__signature__ = signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
            for name in ("target", "config", "graph")
        ]
    )

    @property
    def config(self) -> Any:
        """The `ConfigProto` this session was made with."""
        return session_config(self)

    def devices(self) -> list[str]:
        """The devices this session sees, in short canonical form (`/device:CPU:0`, ...)."""
        return [short_device(d.name) for d in self.list_devices()]

    def run(
        self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
    ) -> Any:
        """`tf.Session.run`, with placement failures raised as `DevicePlacementError`; on a
        `grpc://` target, a master that refuses connections raises `PeerDeadlineError` within
        `REFUSED_WAIT_S` seconds, and other peer failures are named (`devplace.cluster`)."""
        if self._probe_master and self._is_remote:
            self._check_master()
        try:
            values = self._captured(
                lambda: super(Session, self).run(fetches, feed_dict, options, run_metadata)
            )
            self._probe_master = False
            return values
        except tf.errors.InvalidArgumentError as err:
            op_name = _unplaceable_op(err.message)
            if op_name is None:
                raise
            try:
                requested = self.graph.get_operation_by_name(op_name).device
            except KeyError:
                requested = ""
            requested = _requested_device(err.message) or canonical_device(requested)
            soft, available = self.config.allow_soft_placement, self.devices()
            no_kernel = "No OpKernel was registered" in err.message
            context = _placement_context(
                self.graph, op_name, fetches, feed_dict, available, soft, no_kernel
            )
            raise DevicePlacementError(
                op_name, requested, available, err, soft=soft, context=context
            ) from err
        except tf.errors.OpError as err:
            better = self._explain(err)
            if better is err:
                raise
            self._probe_master = True
            raise better from err
        except ValueError as err:
            if (
                "not an element of this graph" not in str(err)
                or self.graph is tf.get_default_graph()
            ):
                raise
            raise ArgumentValueError(
                "run",
                "fetches",
                fetches,
                "tensors of this session's graph, which is no longer the default graph "
                "(reset_default_graph() or another graph made default since the session was made)",
                "make a new Session() to run the new graph",
            ) from err

    def _check_master(self) -> None:
        """Fail at once, as TF would only at its deadline, when the master refuses connections
        for `REFUSED_WAIT_S` seconds (it may be starting); one that accepts keeps the timeout."""
        give_up = time.monotonic() + REFUSED_WAIT_S
        while self._master_gone():
            if time.monotonic() > give_up:
                # what TF would raise at its deadline, without its words (it said nothing yet)
                raise self._explain(tf.errors.DeadlineExceededError(None, None, ""))
            time.sleep(0.1)

    def _master_gone(self) -> bool:
        """Whether this `grpc://` session's master refuses connections (or closes them)."""
        from devplace.cluster.probe import GONE, probe

        # a short probe: only a refusal counts (a slow answer is left to TF and its timeout)
        return probe(tf.compat.as_str(self.sess_str), timeout=0.25).state == GONE

    def close(self) -> None:
        """Close the session. On a `grpc://` target whose master is gone (its cluster stopped),
        without asking it: TF would wait for the whole timeout, at interpreter exit too."""
        if self._is_remote and not self._closed and self._master_gone():
            self._closed = True  # tf.Session's flag: its __del__ then only frees the handle
            return
        super().close()

    def _explain(self, err: Exception) -> Exception:
        """On a `grpc://` target, a dead or hung peer's error naming its address and a fix."""
        target = tf.compat.as_str(self.sess_str)
        if not target.startswith("grpc://"):
            return err
        from devplace.cluster.errors import explain

        timeout = self.config.operation_timeout_in_ms / 1000 or None
        return explain(err, None, target, timeout)

    def _captured(self, call: Any) -> Any:
        """Make or run the session with TF's log lines off the console; the placement log,
        when asked for, is read and echoed."""
        with quiet_tf_log():  # around the capture: each restores what the other set
            if not self._log_placement:
                return call()
            out = None
            try:
                with capture_fds() as out:
                    return call()
            finally:
                if out is not None:
                    _record(self, out.text)

    def __repr__(self) -> str:
        return f"<devplace.Session target={self.sess_str!r} devices={self.devices()}>"

    def _repr_html_(self) -> str:
        from devplace.views.notebook import session_html

        return session_html(self)


Session.__doc__ = inspect.cleandoc(Session.__doc__ or "").replace("{options}", options_doc())

_REMOTE_SESSIONS: weakref.WeakSet[Session] = weakref.WeakSet()


def close_sessions(targets: Iterable[str]) -> None:
    """Close this process's open sessions on `targets` (`grpc://...`): a cluster about to stop
    closes its sessions while their masters still answer."""
    wanted = set(targets)
    for sess in list(_REMOTE_SESSIONS):
        if tf.compat.as_str(sess.sess_str) in wanted:
            sess.close()


def _record(sess: Session, text: str) -> None:
    if not text:
        return
    sys.stderr.write(text)  # TF's log lines among it held back as any (devplace.adapter._tflog)
    for line in text.splitlines():
        line = line.strip()
        if _PLACEMENT_LINE.match(line):
            sess.placement_lines.append(line)
            log.info(line)


class PlacementLogElsewhereError(Error, RuntimeError):
    """The placement log of a `grpc://` session is in a server process devplace cannot read."""


def placement_log(sess: Session) -> list[str]:
    """The `op: (Type): device` lines TF logged for `sess` (needs `log_placement=True`).

    On a `grpc://` target the master task logs them in its own process: they are read from its
    log file when it is a task of a `LocalCluster` of this process (the latest line per op of
    `sess.graph`); for other servers `PlacementLogElsewhereError` says where they are.
    """
    if not getattr(sess, "_log_placement", False):
        raise ArgumentValueError(
            "placement_log",
            "sess",
            sess,
            "a session made with log_placement=True",
            "make it with dp.Session(log_placement=True, ...), or use dp.placement(sess, "
            "fetches) for the devices ops ran on",
        )
    target = tf.compat.as_str(sess.sess_str)
    if sess.placement_lines or not target.startswith("grpc://"):
        return list(sess.placement_lines)  # in process (a server in this process too)
    from devplace.cluster.task_logs import task_log

    path = task_log(target)
    if path is None:
        raise PlacementLogElsewhereError(
            f"placement_log: {target} logs the placement in its own process, on its "
            "standard error (lines 'op: (Type): device'), not here; devplace reads it only for "
            "tasks of a LocalCluster started in this process. Hint: look in that server's "
            "output, or use dp.placement(sess, fetches) for the devices ops ran on"
        )
    latest: dict[str, str] = {}
    for line in path.read_text(errors="replace").splitlines():
        found = _PLACEMENT_LINE.match(line.strip())
        if found and _in_graph(sess.graph, found["op"], found["type"]):
            latest.pop(found["op"], None)
            latest[found["op"]] = line.strip()
    return list(latest.values())


def _in_graph(graph: Any, name: str, op_type: str) -> bool:
    try:
        return bool(graph.get_operation_by_name(name).type == op_type)
    except KeyError:
        return False


def check_session(function: str, sess: Any) -> None:
    """Refuse, naming `function` and its `sess` argument, what is not a TensorFlow session."""
    if not (callable(getattr(sess, "run", None)) and hasattr(sess, "graph")):
        raise ArgumentTypeError(
            function,
            "sess",
            sess,
            "a session (dp.Session or tf.Session)",
            f"make one with sess = dp.Session() and pass it first: {function}(sess, fetches)",
        )


def init(sess: Any) -> None:
    """Initialise every global variable of the session's graph."""
    check_session("init", sess)
    with sess.graph.as_default():
        op = tf.global_variables_initializer()
    sess.run(op)


@accepts_feed_dict
def run(sess: Any, fetches: Any, feed: Mapping[Any, Any] | None = None, **kwargs: Any) -> Any:
    """Run `fetches` with `feed`, returning numpy arrays and plain Python numbers."""
    check_session("run", sess)
    return to_python(sess.run(fetches, feed_dict=feed, **kwargs))
