"""The numbers that compare two profiles: per-device busy time, makespan, transfers."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from devplace.trace import Trace, read_trace

__all__ = ["Comparison", "ProfileSummary", "compare", "format_bytes", "format_time"]


def format_time(us: float) -> str:
    """A duration in µs, ms or s, whichever reads best."""
    if us >= 1e6:
        return f"{us / 1e6:.3g} s"
    if us >= 1e4:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.0f} µs"


def format_bytes(count: int | None) -> str:
    """A byte count in B, KiB, MiB or GiB; '?' when unknown."""
    if count is None:
        return "?"
    size = float(count)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


@dataclass(frozen=True)
class ProfileSummary:
    """One profile's headline numbers (times in µs, bytes None when the trace lacks them)."""

    label: str
    source: str
    devices: tuple[str, ...]
    busy_us: dict[str, float]
    makespan_us: float
    transfer_count: int
    transfer_bytes: int | None
    op_count: int

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
            len(trace.ops),
        )


@dataclass(frozen=True)
class Comparison:
    """Two profiles side by side; `table()` prints them, `to_dict()` exports them."""

    a: ProfileSummary
    b: ProfileSummary

    @property
    def devices(self) -> list[str]:
        """Every device of either profile, in the first profile's order, then the second's."""
        return list(dict.fromkeys([*self.a.devices, *self.b.devices]))

    def rows(self) -> list[tuple[str, str, str]]:
        """(quantity, first profile, second profile) rows, formatted for reading."""
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
            rows.append(
                (
                    f"busy {device}",
                    _busy(self.a, device),
                    _busy(self.b, device),
                )
            )
        return rows

    def table(self) -> str:
        """A plain-text table with one column per profile."""
        header = ("", self.a.label, self.b.label)
        rows = [header, *self.rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        if self.a.transfer_bytes is None or self.b.transfer_bytes is None:
            lines.append("? = the trace does not record sizes (not written by dp.save_profile)")
        return "\n".join(lines)

    __str__ = table

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary of both summaries."""
        return {"a": asdict(self.a), "b": asdict(self.b)}


def _busy(summary: ProfileSummary, device: str) -> str:
    if device not in summary.busy_us:
        return "-"
    busy = summary.busy_us[device]
    share = busy / summary.makespan_us if summary.makespan_us else 0.0
    return f"{format_time(busy)} ({share:.0%})"


def compare(a: Any, b: Any, labels: tuple[str, str] | None = None) -> Comparison:
    """Compare two traces (paths, trace dicts or `Trace`s); labels default to their names."""
    ta, tb = read_trace(a), read_trace(b)
    la, lb = labels or (_label(ta, "A"), _label(tb, "B"))
    return Comparison(ProfileSummary.of(ta, la), ProfileSummary.of(tb, lb))


def _label(trace: Trace, fallback: str) -> str:
    source = trace.source.strip("'\"")
    return source.rsplit("/", 1)[-1] if source != "(in memory)" else fallback
