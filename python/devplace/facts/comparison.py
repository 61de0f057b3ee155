"""The numbers that compare two profiles: per-device busy time, makespan, transfers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tabulate import tabulate

from devplace.adapter.devices import LOGICAL_CPU_CAVEAT, caveat_lines, logical_cpus
from devplace.core.formatting import format_bytes, format_time
from devplace.core.printed import Printed
from devplace.facts.trace import Trace, read_trace

__all__ = [
    "LOGICAL_CPU_CAVEAT",
    "Comparison",
    "ProfileSummary",
    "caveat_lines",
    "compare",
    "logical_cpus",
]


@dataclass(frozen=True, repr=False)
class ProfileSummary:
    """One profile's headline numbers (times in µs, bytes None when the trace lacks them);
    `kernel_busy_us` and `copy_busy_us` hold the GPUs' kernel and copy streams."""

    label: str
    source: str
    devices: tuple[str, ...]
    busy_us: dict[str, float]
    makespan_us: float
    transfer_count: int
    transfer_bytes: int | None
    op_count: int
    op_counts: dict[str, int] = field(default_factory=dict)
    kernel_busy_us: dict[str, float] = field(default_factory=dict)
    copy_busy_us: dict[str, float] = field(default_factory=dict)

    def __repr__(self) -> str:
        return (
            f"ProfileSummary({self.label!r}: {self.op_count} ops on {len(self.devices)} devices, "
            f"makespan {format_time(self.makespan_us)}, {self.transfer_count} transfers)"
        )

    @classmethod
    def of(cls, trace: Trace, label: str) -> ProfileSummary:
        """The summary of a parsed trace."""
        return cls(
            label,
            trace.source,
            tuple(trace.devices),
            trace.busy_us(),
            trace.makespan_us,
            trace.transfer_count,
            trace.transfer_bytes,
            len(trace.graph_ops),
            trace.op_counts(),
            trace.busy_us("kernel"),
            trace.busy_us("copy"),
        )


@dataclass(frozen=True, repr=False)
class Comparison(Printed):
    """Two profiles side by side; `table()` prints them, `to_dict()` exports them."""

    a: ProfileSummary
    b: ProfileSummary

    @property
    def devices(self) -> list[str]:
        """Every device of either profile, in the first profile's order, then the second's."""
        return list(dict.fromkeys([*self.a.devices, *self.b.devices]))

    def rows(self) -> list[tuple[str, str, str]]:
        """(quantity, first profile, second profile) rows, formatted for reading: totals, then
        per device its busy time and (GPUs) its kernel and copy streams' busy time."""
        rows = [
            ("makespan", format_time(self.a.makespan_us), format_time(self.b.makespan_us)),
            ("cross-device transfers", str(self.a.transfer_count), str(self.b.transfer_count)),
            (
                "transfer bytes",
                format_bytes(self.a.transfer_bytes),
                format_bytes(self.b.transfer_bytes),
            ),
            ("ops", str(self.a.op_count), str(self.b.op_count)),
        ]
        for device in self.devices:
            rows.append((f"busy {device}", _busy(self.a, device), _busy(self.b, device)))
            for kind in ("kernel", "copy"):
                if any(device in _streams(s, kind) for s in (self.a, self.b)):
                    rows.append(
                        (
                            f"└ its {kind} streams",
                            _busy(self.a, device, kind),
                            _busy(self.b, device, kind),
                        )
                    )
        return rows

    def table(self) -> str:
        """A plain-text table with one column per profile, and the notes that apply."""
        table = tabulate(
            self.rows(), headers=("", self.a.label, self.b.label), disable_numparse=True
        )
        return "\n".join([table, *self.notes()])

    __str__ = table

    def __repr__(self) -> str:
        return (
            f"Comparison({self.a.label!r} vs {self.b.label!r}: makespan "
            f"{format_time(self.a.makespan_us)} vs {format_time(self.b.makespan_us)}, "
            f"transfers {self.a.transfer_count} vs {self.b.transfer_count})"
        )

    def notes(self, width: int = 100) -> list[str]:
        """The notes that apply under the table (unknown sizes, the logical-CPU caveat), each
        wrapped to `width` characters."""
        unknown = self.a.transfer_bytes is None or self.b.transfer_bytes is None
        sizes = ["? = the trace does not record sizes (not written by dp.save_profile)"]
        return (sizes if unknown else []) + caveat_lines(self.devices, width)

    def _repr_html_(self) -> str:
        from devplace.views.notebook import comparison_html

        return comparison_html(self)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary of both summaries."""
        return {"a": asdict(self.a), "b": asdict(self.b)}


def _streams(summary: ProfileSummary, kind: str) -> dict[str, float]:
    return {"op": summary.busy_us, "kernel": summary.kernel_busy_us, "copy": summary.copy_busy_us}[
        kind
    ]


def _busy(summary: ProfileSummary, device: str, kind: str = "op") -> str:
    busy = _streams(summary, kind)
    if device not in busy:
        return "-"
    share = busy[device] / summary.makespan_us if summary.makespan_us else 0.0
    return f"{format_time(busy[device])} ({share:.0%})"


def compare(a: Any, b: Any, labels: tuple[str, str] | None = None) -> Comparison:
    """Compare two traces (paths, trace dicts or `Trace`s); labels default to their names."""
    ta, tb = read_trace(a), read_trace(b)
    la, lb = labels or (_label(ta, "A"), _label(tb, "B"))
    return Comparison(ProfileSummary.of(ta, la), ProfileSummary.of(tb, lb))


def _label(trace: Trace, fallback: str) -> str:
    return trace.source.rsplit("/", 1)[-1] if trace.source != "(in memory)" else fallback
