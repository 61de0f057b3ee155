"""Sessions whose placement options are keyword arguments, and clear placement errors."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from devplace._fdcapture import capture_fds
from devplace._tf import tf
from devplace.devices import canonical_device, short_device
from devplace.errors import Error
from devplace.values import to_python

__all__ = [
    "DEFAULT_REMOTE_TIMEOUT",
    "DevicePlacementError",
    "Session",
    "init",
    "placement_log",
    "run",
]

log = logging.getLogger("devplace.placement")

#: Seconds a session on a `grpc://` target waits for any operation unless told otherwise:
#: a hung peer otherwise blocks `run` forever.
DEFAULT_REMOTE_TIMEOUT = 60.0

_PLACEMENT_LINE = re.compile(r"^(?P<op>\S+): \((?P<type>\w+)\): (?P<device>/\S+)$")


class DevicePlacementError(Error, tf.errors.InvalidArgumentError):
    """An op could not be put on the device it asked for (no such device, or no kernel)."""

    def __init__(self, op: str, requested: str, available: list[str], original: Any):
        self.op_name = op
        self.requested = requested
        self.available = available
        self.original = original
        reason, hint = _placement_reason(original.message)
        message = (
            f"cannot place op {op!r} on {requested or 'the device it was colocated with'}: "
            f"{reason}. Available devices: {', '.join(available)}. {hint}"
        )
        super().__init__(original.node_def, original.op, message)


_FALL_BACK = (
    "Pin it to one of those, or pass soft=True to Session to let TensorFlow fall back "
    "(dp.placement shows where it lands)."
)


def _placement_reason(message: str) -> tuple[str, str]:
    """Why TF could not place an op, and what to do about it."""
    if "CUDA is not enabled" in message or "appears to be a GPU" in message:
        return "this TensorFlow build sees no GPU", _FALL_BACK
    if "no supported kernel" in message:
        return "the op has no kernel for that device type", _FALL_BACK
    if "No OpKernel was registered" in message:
        devices = re.search(r"Registered devices: \[([^\]]*)\]", message)
        kinds = devices.group(1) if devices else "any device"
        return (
            f"this TensorFlow build has no kernel for the op on {kinds}",
            "No device here can run it, soft placement included: use another op, or a "
            "TensorFlow build and machine with a device that has its kernel.",
        )
    if "incompatible device" in message:
        return "it is colocated with ops that require an incompatible device", _FALL_BACK
    if "available devices are" in message:
        return "no such device exists in this session", _FALL_BACK
    return message.strip().splitlines()[-1], _FALL_BACK


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


def _checked_count(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"Session: {name} must be a non-negative integer, got {value!r}")
    return int(value)


def _build_config(
    *,
    cpus: int | None,
    gpus: int | None,
    soft: bool,
    log_placement: bool,
    inter: int | None,
    intra: int | None,
    per_session_threads: bool,
    allow_growth: bool | None,
    gpu_memory_fraction: float | None,
    optimize: bool,
    timeout: float | None,
    config: Any,
) -> Any:
    proto = tf.ConfigProto()
    if config is not None:
        if not isinstance(config, tf.ConfigProto):
            raise TypeError(
                f"Session: config must be a tf.ConfigProto, got {type(config).__name__}"
            )
        proto.CopyFrom(config)
    for name, count in (("CPU", cpus), ("GPU", gpus)):
        count = _checked_count(f"{name.lower()}s", count)
        if count is not None:
            proto.device_count[name] = count
    if soft:
        proto.allow_soft_placement = True
    if log_placement:
        proto.log_device_placement = True
    if (inter := _checked_count("inter", inter)) is not None:
        proto.inter_op_parallelism_threads = inter
    if (intra := _checked_count("intra", intra)) is not None:
        proto.intra_op_parallelism_threads = intra
    if per_session_threads:
        proto.use_per_session_threads = True
    if allow_growth is not None:
        proto.gpu_options.allow_growth = bool(allow_growth)
    if gpu_memory_fraction is not None:
        if not 0.0 < float(gpu_memory_fraction) <= 1.0:
            raise ValueError(
                f"Session: gpu_memory_fraction must be in (0, 1], got {gpu_memory_fraction!r}"
            )
        proto.gpu_options.per_process_gpu_memory_fraction = float(gpu_memory_fraction)
    if not optimize:
        # Grappler and the classic optimizer fold constants and fuse ops across devices, which
        # changes what runs where; off, the partition graphs are the graph as placed.
        proto.graph_options.rewrite_options.disable_meta_optimizer = True
        opts = proto.graph_options.optimizer_options
        opts.opt_level = tf.OptimizerOptions.L0
        opts.do_constant_folding = False
        opts.do_common_subexpression_elimination = False
        opts.do_function_inlining = False
    if timeout is not None:
        if float(timeout) <= 0:
            raise ValueError(
                f"Session: timeout must be a positive number of seconds, got {timeout!r}"
            )
        proto.operation_timeout_in_ms = max(1, round(float(timeout) * 1000))
    return proto


class Session(tf.Session):
    """A `tf.compat.v1.Session` configured by keyword arguments.

    cpus, gpus: device counts (`cpus=4` gives logical devices `/device:CPU:0..3`).
    soft: fall back to a device that can run an op (`allow_soft_placement`).
    log_placement: log every op's device; the lines are captured, echoed to stderr, sent to
        the `devplace.placement` logger and returned by `placement_log(sess)`.
    inter, intra: inter-op and intra-op thread pool sizes; per_session_threads: own pools.
    allow_growth, gpu_memory_fraction: GPU memory options.
    optimize: False turns Grappler and constant folding off so placements are kept as built.
    target: e.g. `grpc://localhost:2222`; timeout: seconds any operation may block
        (defaults to `DEFAULT_REMOTE_TIMEOUT` for remote targets).
    config: a `tf.ConfigProto` the other options are applied on top of.
    """

    # tf.Session.__del__ reads it, also when __init__ never ran (a bad keyword argument).
    _session = None

    def __init__(
        self,
        cpus: int | None = None,
        gpus: int | None = None,
        soft: bool = False,
        log_placement: bool = False,
        inter: int | None = None,
        intra: int | None = None,
        per_session_threads: bool = False,
        allow_growth: bool | None = None,
        gpu_memory_fraction: float | None = None,
        optimize: bool = True,
        target: str | None = None,
        timeout: float | None = None,
        config: Any = None,
        graph: Any = None,
    ):
        target = target or ""
        if not isinstance(target, str):
            raise TypeError(
                f"Session: target must be a string like 'grpc://host:port', got {target!r}"
            )
        if timeout is None and target.startswith("grpc://"):
            timeout = DEFAULT_REMOTE_TIMEOUT
        self.placement_lines: list[str] = []
        self._log_placement = bool(log_placement)
        proto = _build_config(
            cpus=cpus,
            gpus=gpus,
            soft=soft,
            log_placement=log_placement,
            inter=inter,
            intra=intra,
            per_session_threads=per_session_threads,
            allow_growth=allow_growth,
            gpu_memory_fraction=gpu_memory_fraction,
            optimize=optimize,
            timeout=timeout,
            config=config,
        )
        self._captured(lambda: super(Session, self).__init__(target, graph=graph, config=proto))

    @property
    def config(self) -> Any:
        """The `ConfigProto` this session was made with."""
        return self._config

    def devices(self) -> list[str]:
        """The devices this session sees, in short canonical form (`/device:CPU:0`, ...)."""
        return [short_device(d.name) for d in self.list_devices()]

    def run(
        self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
    ) -> Any:
        """`tf.Session.run`, with placement failures raised as `DevicePlacementError`."""
        try:
            return self._captured(
                lambda: super(Session, self).run(fetches, feed_dict, options, run_metadata)
            )
        except tf.errors.InvalidArgumentError as err:
            op_name = _unplaceable_op(err.message)
            if op_name is None:
                raise
            try:
                requested = self.graph.get_operation_by_name(op_name).device
            except KeyError:
                requested = ""
            requested = _requested_device(err.message) or canonical_device(requested)
            raise DevicePlacementError(op_name, requested, self.devices(), err) from err

    def _captured(self, call: Any) -> Any:
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


def _record(sess: Session, text: str) -> None:
    if not text:
        return
    sys.stderr.write(text)
    for line in text.splitlines():
        line = line.strip()
        if _PLACEMENT_LINE.match(line):
            sess.placement_lines.append(line)
            log.info(line)


def placement_log(sess: Session) -> list[str]:
    """The `op: (Type): device` lines TF logged for `sess` (needs `log_placement=True`)."""
    if not getattr(sess, "_log_placement", False):
        raise ValueError("placement_log: this session was made without log_placement=True")
    return list(sess.placement_lines)


def init(sess: Any) -> None:
    """Initialise every global variable of the session's graph."""
    with sess.graph.as_default():
        op = tf.global_variables_initializer()
    sess.run(op)


def run(sess: Any, fetches: Any, feed: Mapping[Any, Any] | None = None, **kwargs: Any) -> Any:
    """Run `fetches` with `feed`, returning numpy arrays and plain Python numbers."""
    return to_python(sess.run(fetches, feed_dict=feed, **kwargs))
