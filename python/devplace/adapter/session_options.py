"""Session options as data: one declaration per option gives its check, its config and its doc.

`OPTIONS` lists every keyword `devplace.Session` takes besides `target`, `config` and `graph`.
Each `Option` says what values it accepts (types and ranges checked, so `soft='no'` is an error
rather than truthy), how an accepted value sets the `ConfigProto`, and one line of
documentation; the Session's signature, docstring and `docs/placement.md` table come from here.
Adding an option is one entry in `OPTIONS`.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from devplace.adapter._tf import tf
from devplace.adapter.virtual_gpus import set_virtual_gpus
from devplace.core.errors import SessionOptionError, SessionOptionTypeError

__all__ = [
    "MAX_DEVICES",
    "MAX_GPU_MIB",
    "MAX_THREADS",
    "MAX_TIMEOUT",
    "OPTIONS",
    "Kind",
    "Option",
    "SessionOptionError",
    "SessionOptionTypeError",
    "build_config",
    "check_option",
    "check_target",
    "options_table",
]

#: Most logical devices of one type a Session may ask for (`cpus=`, `gpus=`).
MAX_DEVICES = 1024
#: Most MiB one logical GPU may ask for (`virtual_gpus=[...]`): 1 TiB, above any GPU made.
MAX_GPU_MIB = 1 << 20
#: Largest thread pool a Session may ask for (`inter=`, `intra=`).
MAX_THREADS = 4096
#: Longest `timeout=` in seconds (about 31 years; TF keeps milliseconds in an int64).
MAX_TIMEOUT = 1e9


def _flag(value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError
    return bool(value)


def _integer(value: Any, maximum: int, minimum: int = 0) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError
    if not minimum <= value <= maximum:
        raise ValueError
    return int(value)


def _virtual_gpus(value: Any) -> int | tuple[int, ...]:
    """A count of logical GPUs per GPU, or their sizes in MiB (a list, tuple or 1-d array)."""
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise TypeError
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError
        return tuple(_integer(mib, MAX_GPU_MIB, minimum=1) for mib in value)
    return _integer(value, MAX_DEVICES, minimum=1)


def _real(value: Any, low: float, high: float) -> float:
    """A finite number with low < value <= high."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError
    if not (math.isfinite(value) and low < value <= high):
        raise ValueError
    return float(value)


@dataclass(frozen=True)
class Kind:
    """The values an option accepts: in words, and as a converter to the normalised value."""

    expected: str
    convert: Callable[[Any], Any]


FLAG = Kind("True or False", _flag)
DEVICE_COUNT = Kind(
    f"an integer from 0 to {MAX_DEVICES}", functools.partial(_integer, maximum=MAX_DEVICES)
)
CPU_COUNT = Kind(
    f"an integer from 1 to {MAX_DEVICES} (TensorFlow needs a CPU device)",
    functools.partial(_integer, maximum=MAX_DEVICES, minimum=1),
)
THREAD_COUNT = Kind(
    f"an integer from 0 (TensorFlow's choice) to {MAX_THREADS}",
    functools.partial(_integer, maximum=MAX_THREADS),
)
FRACTION = Kind(
    "a number greater than 0 and at most 1", functools.partial(_real, low=0.0, high=1.0)
)
VIRTUAL_GPUS = Kind(
    f"a count of logical GPUs per GPU from 1 to {MAX_DEVICES}, or a list of whole MiB from 1 "
    f"to {MAX_GPU_MIB}, one per logical GPU",
    _virtual_gpus,
)
SECONDS = Kind(
    f"a finite number of seconds greater than 0 and at most {MAX_TIMEOUT:.0e}",
    functools.partial(_real, low=0.0, high=MAX_TIMEOUT),
)


@dataclass(frozen=True)
class Option:
    """One Session keyword: its default, accepted values, effect on the proto, and doc."""

    name: str
    default: Any
    kind: Kind
    apply: Callable[[Any, Any], None]
    doc: str
    hint: str

    def validate(self, value: Any) -> Any:
        """The value, normalised (numpy scalars to Python), or `SessionOptionError`."""
        if value is None and self.default is None:
            return None
        try:  # a converter raises TypeError for a wrong type, ValueError out of range
            return self.kind.convert(value)
        except TypeError:
            error: type[SessionOptionError] = SessionOptionTypeError
        except ValueError:
            error = SessionOptionError
        raise error(self.name, value, self.kind.expected, self.hint)


def _set_count(device_type: str) -> Callable[[Any, int], None]:
    def apply(proto: Any, count: int) -> None:
        proto.device_count[device_type] = count

    return apply


def _set_field(*path: str) -> Callable[[Any, Any], None]:
    """A setter of `proto.<path...>`, e.g. `_set_field("gpu_options", "allow_growth")`."""

    def apply(proto: Any, value: Any) -> None:
        owner = proto
        for name in path[:-1]:
            owner = getattr(owner, name)
        setattr(owner, path[-1], value)

    return apply


def _disable_optimizers(proto: Any, _optimize: bool) -> None:
    # Applied for optimize=False only (options act when they differ from their default).
    # Grappler and the classic optimizer fold constants and fuse ops across devices, which
    # changes what runs where; off, the partition graphs are the graph as placed.
    proto.graph_options.rewrite_options.disable_meta_optimizer = True
    opts = proto.graph_options.optimizer_options
    opts.opt_level = tf.OptimizerOptions.L0
    opts.do_constant_folding = False
    opts.do_common_subexpression_elimination = False
    opts.do_function_inlining = False


def _set_timeout(proto: Any, seconds: float) -> None:
    proto.operation_timeout_in_ms = max(1, round(seconds * 1000))


OPTIONS: tuple[Option, ...] = (
    Option(
        "cpus",
        None,
        CPU_COUNT,
        _set_count("CPU"),
        "number of logical CPU devices (`cpus=4` gives `/device:CPU:0..3`)",
        "cpus=2 gives /device:CPU:0 and /device:CPU:1; leave it out for one CPU device",
    ),
    Option(
        "gpus",
        None,
        DEVICE_COUNT,
        _set_count("GPU"),
        "most GPUs to use (`gpus=0` hides every GPU)",
        "gpus=0 hides the GPUs; leave it out to use every GPU TensorFlow finds",
    ),
    Option(
        "soft",
        False,
        FLAG,
        _set_field("allow_soft_placement"),
        "let TensorFlow move an op to a device that can run it (`allow_soft_placement`)",
        "soft=True lets TensorFlow fall back to a device that can run an op",
    ),
    Option(
        "log_placement",
        False,
        FLAG,
        _set_field("log_device_placement"),
        "log every op's device; `placement_log(sess)` returns the lines",
        "log_placement=True captures TensorFlow's placement log",
    ),
    Option(
        "inter",
        None,
        THREAD_COUNT,
        _set_field("inter_op_parallelism_threads"),
        "threads running independent ops at once",
        "inter=2 runs up to two ops at once; leave it out for TensorFlow's choice",
    ),
    Option(
        "intra",
        None,
        THREAD_COUNT,
        _set_field("intra_op_parallelism_threads"),
        "threads inside one op (a large MatMul)",
        "intra=4 lets one op use four threads; leave it out for TensorFlow's choice",
    ),
    Option(
        "per_session_threads",
        False,
        FLAG,
        _set_field("use_per_session_threads"),
        "give this session its own thread pools instead of the process-wide ones",
        "per_session_threads=True gives the session its own pools",
    ),
    Option(
        "allow_growth",
        None,
        FLAG,
        _set_field("gpu_options", "allow_growth"),
        "take GPU memory as needed instead of all at once (fixed by the process's first session)",
        "allow_growth=True takes GPU memory as needed",
    ),
    Option(
        "gpu_memory_fraction",
        None,
        FRACTION,
        _set_field("gpu_options", "per_process_gpu_memory_fraction"),
        "share of each GPU's memory to take (fixed by the process's first session)",
        "gpu_memory_fraction=0.4 takes 40% of each GPU's memory",
    ),
    Option(
        "virtual_gpus",
        None,
        VIRTUAL_GPUS,
        set_virtual_gpus,
        "split each GPU into logical GPUs: `4` shares its memory equally (90%, or "
        "`gpu_memory_fraction`), `[2048, 2048]` gives MiB each (fixed by the process's first "
        "session)",
        "virtual_gpus=4 gives /device:GPU:0..3 on one GPU; virtual_gpus=[2048, 2048] gives two "
        "of 2 GiB each",
    ),
    Option(
        "optimize",
        True,
        FLAG,
        _disable_optimizers,
        "False turns Grappler and constant folding off, so ops run where they were placed",
        "optimize=False keeps the graph as built (placement-faithful profiles)",
    ),
    Option(
        "timeout",
        None,
        SECONDS,
        _set_timeout,
        "seconds any operation may block (default 60 for `grpc://` targets, else none)",
        "timeout=30 stops a run that blocks for 30 s; leave it out to wait without a bound",
    ),
)

_BY_NAME = {option.name: option for option in OPTIONS}


def check_option(name: str, value: Any) -> Any:
    """One option's value checked and normalised as `Session` does it (`SessionOptionError`)."""
    return _BY_NAME[name].validate(value)


def build_config(options: dict[str, Any], config: Any = None) -> Any:
    """The `ConfigProto` for Session keyword `options`, applied on top of a copy of `config`.

    Unknown names raise `TypeError` naming them and the valid ones; bad values raise
    `SessionOptionError`. Options left at their default leave `config` as it is. Options apply
    in `OPTIONS` order, whatever order they were given in: `virtual_gpus` reads what `soft`,
    `gpus` and `gpu_memory_fraction` set.
    """
    for name in options:
        if name not in _BY_NAME:
            close = difflib.get_close_matches(name, _BY_NAME, n=1)
            raise SessionOptionTypeError(
                "keyword",
                name,
                f"one of {', '.join(_BY_NAME)}, target, config, graph",
                f"did you mean {close[0]}={options[name]!r}?" if close else "check its spelling",
            )
    proto = tf.ConfigProto()
    if config is not None:
        if not isinstance(config, tf.ConfigProto):
            raise SessionOptionTypeError(
                "config",
                config,
                "a tf.ConfigProto",
                "config must be a tf.ConfigProto; use the keyword options for single settings",
            )
        proto.CopyFrom(config)
    for option in OPTIONS:
        if option.name not in options:
            continue
        value = option.validate(options[option.name])
        if value is not None and value != option.default:
            option.apply(proto, value)
    return proto


_HOST = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?\Z")
_TARGET_HINT = (
    "use None or '' for an in-process session, or 'grpc://HOST:PORT' for a TensorFlow "
    "server, e.g. 'grpc://localhost:2222'"
)


def check_target(target: Any) -> str:
    """The session target, checked: `''` (in-process) or `grpc://HOST:PORT` with a valid port."""
    if target is None:
        return ""
    if not isinstance(target, str):
        raise SessionOptionTypeError("target", target, "a string or None", _TARGET_HINT)
    if target == "":
        return target
    expected = "'grpc://HOST:PORT' with a port from 1 to 65535"
    if not target.startswith("grpc://"):
        raise SessionOptionError("target", target, expected, _TARGET_HINT)
    host, _, port = target[len("grpc://") :].rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host_ok = len(host) > 2 and all(c in "0123456789abcdefABCDEF:." for c in host[1:-1])
    else:
        host_ok = bool(_HOST.match(host))
    if not host_ok or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise SessionOptionError("target", target, expected, _TARGET_HINT)
    return target


def signature(extra: list[inspect.Parameter]) -> inspect.Signature:
    """The keyword-only signature of `Session.__init__`: every option, then `extra`."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
    params += [
        inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=option.default)
        for option in OPTIONS
    ]
    return inspect.Signature(params + extra)


def options_doc() -> str:
    """One line per option for a docstring: `name=default (accepted values): what it does`."""
    return "\n".join(
        f"{option.name}={option.default!r} ({option.kind.expected}): {option.doc}."
        for option in OPTIONS
    ).replace("\n", "\n  ")


def options_table() -> str:
    """The options as a Markdown table (name, default, accepted values, meaning)."""
    rows = ["| option | default | accepts | meaning |", "|---|---|---|---|"]
    rows += [f"| `{o.name}` | `{o.default!r}` | {o.kind.expected} | {o.doc} |" for o in OPTIONS]
    return "\n".join(rows)
