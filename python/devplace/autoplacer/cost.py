"""Cost model: device speed factors and per-link transfer cost alpha + beta * bytes.

Times are in microseconds, sizes in bytes. Presets describe a PCIe-like link (host <->
accelerator, accelerator <-> accelerator through host memory), an NVLink-like peer link, and
logical CPU devices that share memory (free transfers). `fit_link` fits alpha and beta to
measured transfers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import nnls

from devplace.autoplacer.graph import PlacementError

__all__ = ["NVLINK", "PCIE", "SHARED", "CostModel", "Link", "device_kind", "fit_link"]


@dataclass(frozen=True)
class Link:
    """A transfer link: `alpha` µs latency plus `beta` µs per byte."""

    name: str
    alpha: float
    beta: float

    def time(self, nbytes: float) -> float:
        """Transfer time in µs of `nbytes` bytes."""
        return self.alpha + self.beta * nbytes


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
        raise PlacementError(
            f"fit_link needs two equally long sequences of at least 2 samples, got {x.size} sizes "
            f"and {y.size} times; hint: measure several tensor sizes"
        )
    scale = max(float(x.max()), 1.0)
    weight = 1.0 / np.maximum(np.abs(y), max(1e-3 * float(np.abs(y).max()), 1e-12))
    design = np.column_stack([np.ones_like(x), x / scale]) * weight[:, None]
    coef, _ = nnls(design, y * weight)
    return Link(name, alpha=float(coef[0]), beta=float(coef[1] / scale))


def device_kind(name: str) -> str:
    """'cpu' for CPU device names, 'acc' for any other (GPU, TPU, accelerator)."""
    low = name.lower()
    return "cpu" if "cpu" in low.rsplit("/", 1)[-1] else "acc"


@dataclass(frozen=True)
class CostModel:
    """How measured op times and tensor sizes become a problem's costs.

    `speeds` maps a device name or kind ("cpu", "acc") to a speed factor relative to the
    profiled device (time = measured / speed). `link` connects a CPU with an accelerator;
    accelerators talk through `peer_link` if given, else through host memory (twice `link`);
    CPU devices talk through `cpu_link`. `cpu_threads` makes all CPU devices share one pool of
    that many threads (TF's logical CPU devices); `cpu_slots` lets each CPU device run that many
    ops at once. `op_overhead_us` is added to every op's time: the executor's dispatch cost,
    which a profile's per-op durations leave out.
    """

    link: Link = PCIE
    peer_link: Link | None = None
    cpu_link: Link = SHARED
    speeds: Mapping[str, float] = field(default_factory=dict)
    cpu_threads: int | None = None
    cpu_slots: int = 1
    serial_links: bool = True
    op_overhead_us: float = 0.0

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

    def speed(self, name: str) -> float:
        """Speed factor of a device (by name, then kind, default 1)."""
        value = self.speeds.get(name, self.speeds.get(device_kind(name), 1.0))
        if not value > 0:
            raise PlacementError(f"speed of device {name!r} must be > 0, got {value!r}")
        return float(value)

    def links(self, devices: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """alpha and beta matrices (µs, µs per byte) between the named devices."""
        d = len(devices)
        alpha, beta = np.zeros((d, d)), np.zeros((d, d))
        kinds = [device_kind(x) for x in devices]
        for i in range(d):
            for j in range(d):
                if i == j:
                    continue
                if kinds[i] == kinds[j] == "cpu":
                    lk, k = self.cpu_link, 1.0
                elif kinds[i] == kinds[j] == "acc":
                    lk, k = (self.peer_link, 1.0) if self.peer_link else (self.link, 2.0)
                else:
                    lk, k = self.link, 1.0
                alpha[i, j], beta[i, j] = k * lk.alpha, k * lk.beta
        return alpha, beta

    def compute(self, times_us: np.ndarray, devices: Sequence[str]) -> np.ndarray:
        """Per-op, per-device compute times from measured times (n,) and speed factors."""
        factors = np.array([self.speed(x) for x in devices])
        times = np.asarray(times_us, dtype=float)[:, None] / factors[None, :]
        return times + self.op_overhead_us
