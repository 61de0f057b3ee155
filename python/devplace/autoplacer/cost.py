"""Cost model: per-device op times, device concurrency, and links alpha + beta * bytes.

Times are in microseconds, sizes in bytes. Op times come from per-device profiles
(`DeviceProfiles`, see `devplace.autoplacer.profiles.profile_devices`) where they exist, else
from one profile scaled by a speed factor. Link presets describe a PCIe-like link (host <->
accelerator, accelerator <-> accelerator through host memory), an NVLink-like peer link, and
logical CPU devices that share memory (free transfers). `fit_link` fits alpha and beta to
measured transfers, `fit_crossings` to measured CPU <-> GPU crossings inside a step.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import nnls

from devplace.autoplacer.graph import AutoPlacementError, link_time

__all__ = [
    "NVLINK",
    "PCIE",
    "SHARED",
    "CostModel",
    "DeviceProfiles",
    "Link",
    "device_kind",
    "crossing_costs",
    "fit_crossings",
    "fit_link",
    "session_target",
    "task_of",
    "task_pair",
]


@dataclass(frozen=True)
class Link:
    """A transfer link: `alpha` µs latency plus `beta` µs per byte.

    `points`: measured (bytes, µs) transfer times. With them a transfer's time is read off the
    points (linear between measured sizes, the last segment's slope above them, the smallest
    size's time below), `alpha` is the per-transfer part (their smallest time) and `beta` only
    the fitted bandwidth, for reports.
    """

    name: str
    alpha: float
    beta: float
    points: tuple[tuple[float, float], ...] = ()

    def time(self, nbytes: Any) -> Any:
        """Transfer time in µs of `nbytes` bytes (a number or an array)."""
        if not self.points:
            return link_time(self.alpha, self.beta, nbytes)
        x, y = (np.array(v, dtype=float) for v in zip(*sorted(self.points), strict=True))
        n = np.asarray(nbytes, dtype=float)
        slope = max((y[-1] - y[-2]) / (x[-1] - x[-2]), 0.0) if len(x) > 1 else 0.0
        out = np.where(n <= x[-1], np.interp(n, x, y), y[-1] + slope * (n - x[-1]))
        return float(out) if out.ndim == 0 else out


PCIE = Link("pcie", alpha=10.0, beta=1.0 / 12e3)  # ~12 GB/s effective PCIe 3 x16
NVLINK = Link("nvlink", alpha=5.0, beta=1.0 / 100e3)  # ~100 GB/s NVLink-like peer link
SHARED = Link("shared", alpha=0.0, beta=0.0)  # devices sharing host memory


def fit_link(nbytes: Sequence[float], times_us: Sequence[float], name: str = "measured") -> Link:
    """alpha, beta >= 0 for measured transfer times of given sizes, least relative error.

    Sizes usually span decades; a plain least-squares fit would let the largest transfers set
    alpha, which matters most for the small ones. Each sample's error is therefore taken
    relative to its time (times under 0.1% of the largest count as that much).
    """
    x = np.asarray(nbytes, dtype=float)
    y = np.asarray(times_us, dtype=float)
    if x.shape != y.shape or x.size < 2:
        raise AutoPlacementError(
            f"fit_link needs two equally long sequences of at least 2 samples, got {x.size} sizes "
            f"and {y.size} times; hint: measure several tensor sizes"
        )
    scale = max(float(x.max()), 1.0)
    weight = 1.0 / np.maximum(np.abs(y), max(1e-3 * float(np.abs(y).max()), 1e-12))
    design = np.column_stack([np.ones_like(x), x / scale]) * weight[:, None]
    coef, _ = nnls(design, y * weight)
    return Link(name, alpha=float(coef[0]), beta=float(coef[1] / scale))


def crossing_costs(records: Sequence[Mapping[str, float]]) -> tuple[list[float], np.ndarray]:
    """Sizes and per-crossing costs (µs, >= 0) of chains measured with and without crossings.

    Each record has `bytes`, `same_chain_us` (a chain of ops on one device), `cross_chain_us`
    (the same chain alternating devices) and `crossings`; a crossing costs the difference over
    the number of crossings.
    """
    try:
        sizes = [float(r["bytes"]) for r in records]
        per = [(r["cross_chain_us"] - r["same_chain_us"]) / r["crossings"] for r in records]
    except (KeyError, TypeError, ZeroDivisionError) as err:
        raise AutoPlacementError(
            f"crossing records need bytes, same_chain_us, cross_chain_us and crossings > 0 "
            f"({err!r}); hint: pass the `link_cpu_gpu` list of a measurements file, or "
            "`measure_link`'s records"
        ) from None
    return sizes, np.maximum(per, 0.0)


def fit_crossings(records: Sequence[Mapping[str, float]], name: str = "cpu-gpu") -> Link:
    """The CPU <-> GPU link from chains measured with and without crossings (`link_cpu_gpu`).

    A crossing's cost (`crossing_costs`) includes the host's copy set-up and the
    synchronisation a step waits for, not only the wire. Those costs are the link's `points`:
    crossings are not affine in size (pageable host copies make mid sizes dear), so an
    alpha + beta fit misses them by half at 1 MiB. `alpha` is the cheapest crossing; `beta`
    comes from `fit_link`.
    """
    sizes, costs = crossing_costs(records)
    fitted = fit_link(sizes, costs, name)
    by_size: dict[float, list[float]] = {}
    for size, cost in zip(sizes, costs.tolist(), strict=True):
        by_size.setdefault(size, []).append(cost)  # repeated sizes: their mean
    points = tuple((size, statistics.fmean(c)) for size, c in sorted(by_size.items()))
    return Link(name, alpha=float(costs.min()), beta=fitted.beta, points=points)


def task_of(name: str) -> str | None:
    """The `/job:J/task:T` part of a device name (replica left out), or None for a local one."""
    from devplace.adapter.devices import parse_device

    dev = parse_device(name)
    if dev.job is None:
        return None
    return f"/job:{dev.job}/task:{dev.task or 0}"


def session_target(sess: Any) -> str:
    """A session's target as text (`grpc://host:port`; "" for an in-process session)."""
    target = getattr(sess, "sess_str", "") or ""
    return target.decode() if isinstance(target, bytes) else str(target)


def task_pair(a: str, b: str) -> tuple[str, str]:
    """The key of the link between tasks (or devices of tasks) `a` and `b` in `task_links`."""
    ta, tb = task_of(a) or a, task_of(b) or b
    return (ta, tb) if ta <= tb else (tb, ta)


def device_kind(name: str) -> str:
    """'cpu' for CPU device names, 'acc' for any other (GPU, TPU, accelerator)."""
    low = name.lower()
    return "cpu" if "cpu" in low.rsplit("/", 1)[-1] else "acc"


def _device_type(name: str) -> str:
    """ "CPU", "GPU", ... of a device name (the last `device:TYPE:i` part, upper case)."""
    last = name.rsplit("/", 1)[-1]
    parts = last.split(":")
    return (parts[-2] if len(parts) >= 2 else parts[0]).upper()


class DeviceProfiles:
    """Measured op times per device kind: `{device: {op: {"us", "bytes", "type", "device"}}}`.

    One profile per device kind (the graph run whole on `/device:CPU:0`, on `/device:GPU:0`,
    ...); it serves every device of that type. Devices of servers (`/job:J/task:T/...`) may
    each have their own: a device takes the profile of its own name, else the one `shared`
    names for it (a task of the same kind and cores), else one of its task and type, else the
    first of its type. An entry whose `device` is another device records that soft placement
    moved the op there: it has no kernel on the profiled kind.

    Fallback rule, for an op the profile of a kind lacks: its time on a profiled kind times the
    median ratio (this kind / that kind) of the ops of the same type measured on both, else of
    all ops measured on both; with no profile naming the op, None (the caller's static
    estimate).

    `steps`: per profiled device, the untraced step time (µs) of the graph run whole there,
    which `autoplacer.calibration` matches with a per-op offset; `spans` the time (µs) from
    its first op's start to its last op's end in the traced steps (median), so that the rest
    of a step (feeding, fetching, starting it) is not taken for op time.
    """

    def __init__(
        self,
        profiles: Mapping[str, Mapping[str, Mapping[str, Any]]],
        shared: Mapping[str, str] | None = None,
        steps: Mapping[str, float] | None = None,
        spans: Mapping[str, float] | None = None,
    ):
        from devplace.adapter.devices import canonical_device

        if not profiles:
            raise AutoPlacementError("DeviceProfiles needs at least one device's profile")
        for dev, ops in profiles.items():
            for op, entry in ops.items():
                us = entry.get("us") if isinstance(entry, Mapping) else None
                if isinstance(us, bool) or not isinstance(us, (int, float)) or not us >= 0:
                    raise AutoPlacementError(
                        f"profile of {dev!r}: op {op!r} needs a time 'us' >= 0, got {entry!r}; "
                        'hint: entries look like {"us": 12.5, "bytes": 4096, "type": "MatMul"}'
                    )
        self.profiles = {canonical_device(dev): dict(ops) for dev, ops in profiles.items()}
        #: device -> the profiled device whose profile it uses (same kind and cores)
        self.shared = {canonical_device(k): canonical_device(v) for k, v in (shared or {}).items()}
        #: profiled device -> its measured untraced step time (µs), the whole graph there
        self.steps = {canonical_device(k): v for k, v in (steps or {}).items()}
        #: profiled device -> the median traced span of its ops (µs), the whole graph there
        self.spans = {canonical_device(k): v for k, v in (spans or {}).items()}
        for key, names in (
            ("shared", set(self.shared.values())),
            ("steps", set(self.steps)),
            ("spans", set(self.spans)),
        ):
            unknown = sorted(names - set(self.profiles))
            if unknown:
                raise AutoPlacementError(
                    f"DeviceProfiles: {key} names devices without a profile: {unknown}; "
                    f"hint: one of {sorted(self.profiles)}"
                )
        for what, times, least in (("step time", self.steps, "> 0"), ("span", self.spans, ">= 0")):
            for dev, us in times.items():
                number = not isinstance(us, bool) and isinstance(us, (int, float))
                if not number or not (us > 0 if least == "> 0" else us >= 0):
                    raise AutoPlacementError(
                        f"DeviceProfiles: the {what} of {dev!r} must be a number of µs {least}, "
                        f"got {us!r}"
                    )
        self._by_type: dict[str, str] = {}
        for dev in self.profiles:
            self._by_type.setdefault(_device_type(dev), dev)
        self._ratios: dict[tuple[str | None, str, str], float] = {}

    @classmethod
    def load(cls, path: str | os.PathLike[str], model: str | None = None) -> DeviceProfiles:
        """Profiles saved by `save`, or a measurements file's `models[model].profiles`."""
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as err:
            raise AutoPlacementError(
                f"cannot read device profiles from {str(path)!r}: {err}"
            ) from err
        if model is not None:
            models = data.get("models", {})
            if model not in models:
                raise AutoPlacementError(
                    f"{str(path)!r} has no model {model!r}; hint: one of {sorted(models)}"
                )
            data = models[model]
        if not isinstance(data.get("profiles"), dict):
            raise AutoPlacementError(
                f"{str(path)!r} has no 'profiles' object; hint: save it with "
                "DeviceProfiles.save, or name the model of a measurements file"
            )
        return cls(data["profiles"], data.get("shared"), data.get("steps"), data.get("spans"))

    def save(self, path: str | os.PathLike[str]) -> str:
        """Write the profiles as JSON (atomically); returns the path."""
        from devplace.core.atomic import write_text

        data = {
            "profiles": self.profiles,
            "shared": self.shared,
            "steps": self.steps,
            "spans": self.spans,
        }
        write_text(path, json.dumps(data, indent=1) + "\n")
        return os.fspath(path)

    def kinds(self) -> list[str]:
        """The profiled device types ("CPU", "GPU", ...)."""
        return sorted(self._by_type)

    def profile_of(self, device: str) -> str | None:
        """The profiled device whose profile serves `device` (None: its kind was never profiled)."""
        from devplace.adapter.devices import canonical_device

        name = canonical_device(device)
        if name in self.profiles:
            return name
        if name in self.shared:
            return self.shared[name]
        dtype, task = _device_type(name), task_of(name)
        if task is not None:
            for dev in self.profiles:
                if task_of(dev) == task and _device_type(dev) == dtype:
                    return dev
        return self._by_type.get(dtype)

    def _entry(self, op: str, device: str) -> Mapping[str, Any] | None:
        dev = self.profile_of(device)
        return None if dev is None else self.profiles[dev].get(op)

    def runs_on(self, op: str, device: str) -> bool | None:
        """False when the profile of `device`'s kind shows `op` moved elsewhere; None: unknown."""
        dtype = _device_type(device)
        entry = self._entry(op, device)
        if entry is None or "device" not in entry:
            return None
        return _device_type(str(entry["device"])) == dtype

    def output_bytes(self, op: str) -> float | None:
        """Bytes of `op`'s outputs in any profile naming it."""
        for ops in self.profiles.values():
            if op in ops and ops[op].get("bytes") is not None:
                return float(ops[op]["bytes"])
        return None

    def _ratio(self, op_type: str | None, to: str, frm: str) -> float:
        """Median time ratio kind `to` / kind `frm` over ops measured on both (same type first)."""
        a, b = self.profiles[self._by_type[to]], self.profiles[self._by_type[frm]]
        both = [
            k
            for k in a
            if k in b
            and self.runs_on(k, self._by_type[to]) is not False
            and self.runs_on(k, self._by_type[frm]) is not False
        ]
        same = [k for k in both if a[k].get("type") == op_type]
        pick = same or both
        ratios = [a[k]["us"] / b[k]["us"] for k in pick if a[k]["us"] > 0 and b[k]["us"] > 0]
        return statistics.median(ratios) if ratios else 1.0

    def time(self, op: str, device: str, op_type: str | None = None) -> float | None:
        """Measured (or by the fallback rule, derived) time of `op` on `device`, in µs.

        None when no profile names the op, or `device`'s kind was never profiled.
        """
        dtype = _device_type(device)
        if dtype not in self._by_type:
            return None
        entry = self._entry(op, device)
        if entry is not None and self.runs_on(op, device) is not False:
            return float(entry["us"])
        for other in self.kinds():
            if other == dtype:
                continue
            got = self._entry(op, self._by_type[other])
            if got is not None and self.runs_on(op, self._by_type[other]) is not False:
                key = (op_type, dtype, other)
                if key not in self._ratios:
                    self._ratios[key] = self._ratio(*key)
                return float(got["us"]) * self._ratios[key]
        return None


@dataclass(frozen=True)
class CostModel:
    """How measured op times and tensor sizes become a problem's costs.

    `speeds` maps a device name or kind ("cpu", "acc") to a speed factor relative to the
    profiled device (time = measured / speed). `link` connects a CPU with an accelerator;
    accelerators talk through `peer_link` if given, else through host memory (twice `link`);
    CPU devices talk through `cpu_link`. `cpu_threads` makes all CPU devices share one pool of
    that many threads (TF's logical CPU devices); `cpu_slots` lets each CPU device run that many
    ops at once, `acc_slots` each accelerator (ops the host launches concurrently on it).
    `op_overhead_us` is added to every op's time: the executor's dispatch cost, which a
    profile's per-op durations leave out. `shared_channel`: all transfers queue on one channel
    (the host's copy engine and the one thread that waits for copies to finish) rather than
    one per sending device. `dma_copies`: a transfer holds its channel only for the link's
    alpha (the host's set-up and synchronisation); its bytes then move by DMA while the
    channel serves the next transfer.

    `profiles` (a `DeviceProfiles`) gives each op its measured time per device kind; speed
    factors then apply only to kinds it lacks (relative to its first kind). Without profiles,
    one time per op (a `dp.run_profile` result or a static estimate) is scaled by `speeds`.

    Servers (devices named `/job:J/task:T/...`): `task_links` maps a pair of tasks (`task_pair`)
    to the link between them (`measure_crossings`), `task_link` serves the pairs it lacks (None: the
    kind rules above); `task_threads` gives each task's inter-op pool (its cores): the task's
    CPU devices share that many threads; `step_us` is what a step costs on the master's task
    alone, and `task_step_us` the master's work per other task a step involves (added once
    per task other than `master` that runs an op; see `devplace.autoplacer.measure`), less
    `master_task_us` (the master's task's own share of `step_us`) when no op runs there.
    `master`: the task the client talks to; a fed placeholder on another task waits for its
    tensor to cross from the master's task, a fetched op on another task sends its output
    there (both over `task_links`). `task_send_share`: the part of a transfer between tasks
    that is work of the sending task's cores, the rest the receiving task's (measured: each
    end of a gRPC transfer pays about half of it in CPU; see docs/autoplace.md).
    `remote_start_us`: how late in a step another task's partition starts its first op while
    the master's task works (`measure_servers`).
    """

    link: Link = PCIE
    peer_link: Link | None = None
    cpu_link: Link = SHARED
    speeds: Mapping[str, float] = field(default_factory=dict)
    cpu_threads: int | None = None
    cpu_slots: int = 1
    acc_slots: int = 1
    serial_links: bool = True
    shared_channel: bool = False
    op_overhead_us: float = 0.0
    dma_copies: bool = False
    profiles: DeviceProfiles | None = None
    task_links: Mapping[tuple[str, str], Link] = field(default_factory=dict)
    task_link: Link | None = None
    task_threads: Mapping[str, int] = field(default_factory=dict)
    task_step_us: float = 0.0
    step_us: float = 0.0
    master_task_us: float = 0.0
    master: str | None = None
    task_send_share: float = 0.5
    remote_start_us: float = 0.0

    @classmethod
    def pcie(cls, **kw: object) -> CostModel:
        """Accelerators on PCIe, talking through host memory."""
        return cls(link=PCIE, **kw)  # type: ignore[arg-type]

    @classmethod
    def nvlink(cls, **kw: object) -> CostModel:
        """Accelerators on PCIe to the host and an NVLink-like link between them."""
        return cls(link=PCIE, peer_link=NVLINK, **kw)  # type: ignore[arg-type]

    @classmethod
    def measured(cls, link: Link, **kw: object) -> CostModel:
        """A model using a fitted link (see `fit_link`) between every pair of devices."""
        return cls(link=link, peer_link=link, cpu_link=link, **kw)  # type: ignore[arg-type]

    @classmethod
    def from_profiles(
        cls, profiles: DeviceProfiles, link: Link | None = None, **kw: object
    ) -> CostModel:
        """The model of one host with a CPU and accelerators, from per-device profiles.

        `link`: the CPU <-> accelerator link (`fit_crossings` of measured crossings; default
        `PCIE`). Stated constants (override through `kw`): a CPU device runs `cpu_slots=4`
        ops at once (its inter-op threads, fewer than its cores because big ops use several
        cores each through intra-op threads); an accelerator's host launches `acc_slots=4`
        ops at once (their profiled times are the host-side launch times, which dominate
        the short kernels of these graphs, and carry tracing overhead that 4 concurrent
        launches offset); transfers share one channel, holding it for the link's alpha only
        (`dma_copies`). For servers pass their measurements through `kw`: `task_links`
        (`measure_crossings` per pair of tasks), `task_threads`, `task_step_us`, `step_us`,
        `master_task_us`, `remote_start_us` and `op_overhead_us` (`measure_servers`), `master`.
        """
        options: dict[str, Any] = {
            "cpu_slots": 4,
            "acc_slots": 4,
            "shared_channel": True,
            "dma_copies": True,
        }
        options.update(kw)
        return cls(link=link or PCIE, profiles=profiles, **options)

    def speed(self, name: str) -> float:
        """Speed factor of a device (by name, then kind, default 1)."""
        value = self.speeds.get(name, self.speeds.get(device_kind(name), 1.0))
        if not value > 0:
            raise AutoPlacementError(f"speed of device {name!r} must be > 0, got {value!r}")
        return float(value)

    def transfer_units(self, nbytes: np.ndarray) -> np.ndarray:
        """What transfers of `nbytes` cost in the units `links`' beta multiplies.

        Bytes; with a measured `link.points` curve, its time beyond alpha in µs (beta is then
        1, and every other link must be free or that same link).
        """
        if not self._curve():
            return np.asarray(nbytes, dtype=float)
        return np.asarray(self.link.time(nbytes), dtype=float) - self.link.alpha

    def _curve(self) -> bool:
        """True when `link` has measured points (checking every other link is free or it)."""
        if not self.link.points:
            return False
        if self.task_links or self.task_link is not None:
            raise AutoPlacementError(
                f"link {self.link.name!r} has measured points (µs per crossing), task links "
                "count bytes; hint: give the CPU <-> accelerator link as fit_link's alpha + beta"
            )
        others = [self.cpu_link, self.peer_link or self.link]
        if any(lk != self.link and (lk.alpha, lk.beta, lk.points) != (0, 0, ()) for lk in others):
            raise AutoPlacementError(
                f"link {self.link.name!r} has measured points, so it must be the only link that "
                f"costs time; got cpu_link {self.cpu_link!r} and peer_link {self.peer_link!r}; "
                "hint: use SHARED or that same link for them"
            )
        return True

    def links(self, devices: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """alpha and beta matrices (µs, µs per `transfer_units` unit) between the named devices."""
        d = len(devices)
        curve = self._curve()
        alpha, beta = np.zeros((d, d)), np.zeros((d, d))
        kinds = [device_kind(x) for x in devices]
        tasks = [task_of(x) for x in devices]
        for i in range(d):
            for j in range(d):
                if i == j:
                    continue
                if tasks[i] != tasks[j] and (lk := self._task_link(devices[i], devices[j])):
                    alpha[i, j], beta[i, j] = lk.alpha, lk.beta
                    continue
                if kinds[i] == kinds[j] == "cpu":
                    lk, k = self.cpu_link, 1.0
                elif kinds[i] == kinds[j] == "acc":
                    lk, k = (self.peer_link, 1.0) if self.peer_link else (self.link, 2.0)
                else:
                    lk, k = self.link, 1.0
                unit = float(lk == self.link) if curve else lk.beta
                alpha[i, j], beta[i, j] = k * lk.alpha, k * unit
        return alpha, beta

    def _task_link(self, a: str, b: str) -> Link | None:
        """The link between the tasks of devices `a` and `b` (None: none given)."""
        found = self.task_links.get(task_pair(a, b), self.task_link)
        if found is not None and found.points:
            raise AutoPlacementError(
                f"link {found.name!r} between tasks has measured points; task links are "
                "alpha + beta * bytes; hint: fit them with fit_link or measure_link"
            )
        return found

    def master_crossing(self, device: str, nbytes: float) -> float:
        """µs to move `nbytes` between the master's task and `device`'s (0 on the same task,
        without a master or without a link between them)."""
        task = task_of(device)
        if self.master is None or task is None or task == self.master:
            return 0.0
        found = self._task_link(self.master, device)
        return 0.0 if found is None else float(found.time(nbytes))

    def compute(
        self,
        times_us: np.ndarray,
        devices: Sequence[str],
        ops: Sequence[tuple[str, str]] | None = None,
    ) -> np.ndarray:
        """Per-op, per-device compute times (n, d); inf where a profile shows no kernel.

        `times_us` (n,): one time per op (a profile's, or a static estimate), scaled by the
        speed factors. With `profiles` and `ops` ((name, type) per op), each device kind the
        profiles cover takes its measured time (`DeviceProfiles.time`'s fallback rule
        included); other kinds scale the op's time on the first profiled kind.
        """
        factors = np.array([self.speed(x) for x in devices])
        times = np.asarray(times_us, dtype=float)[:, None] / factors[None, :]
        if self.profiles is not None and ops is not None:
            ref = self.profiles.kinds()[0]
            for i, (name, op_type) in enumerate(ops):
                base = self.profiles.time(name, f"/device:{ref}:0", op_type)
                for j, dev in enumerate(devices):
                    if self.profiles.runs_on(name, dev) is False:
                        times[i, j] = np.inf
                    elif (got := self.profiles.time(name, dev, op_type)) is not None:
                        times[i, j] = got
                    elif base is not None:
                        times[i, j] = base / factors[j]
        return times + self.op_overhead_us
