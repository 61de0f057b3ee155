"""How devplace writes numbers for people: counts with their noun, durations, byte sizes.

Every view (text reports, pictures, notebook tables, the command line, `explain()`) formats
through these, so one number reads the same wherever it is shown. A leaf: it imports no other
devplace module, so any module may use it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Protocol

__all__ = [
    "article",
    "byte_count",
    "fetched_line",
    "format_bytes",
    "format_time",
    "plural",
    "time_unit",
]


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 op`, `2 ops`; `many` for a plural that is not `word + "s"` (`copy`, `copies`)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def article(word: str) -> str:
    """`word` after its indefinite article, by its first letter: `an int`, `a float`."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def time_unit(us: float) -> tuple[float, str]:
    """The unit a duration of `us` µs reads best in, with its size in µs: s from 1 s, ms from
    10 ms, else µs. A picture's time axis takes the unit of its longest span, so the axis and
    that span's label (the makespan in the title) agree."""
    if us >= 1e6:
        return 1e6, "s"
    if us >= 1e4:
        return 1e3, "ms"
    return 1.0, "µs"


def format_time(us: float) -> str:
    """A duration in the unit `time_unit` picks for it: `950 µs`, `9,500 µs`, `12.3 ms`."""
    scale, unit = time_unit(abs(us))
    return f"{us:,.0f} µs" if unit == "µs" else f"{us / scale:.3g} {unit}"


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


def byte_count(count: float) -> str:
    """An exact number of bytes, its digits grouped: `1 byte`, `8,192 bytes`."""
    return f"{count:,.0f} {'byte' if count == 1 else 'bytes'}"


class _Fetched(Protocol):
    device: str
    bytes: int


def fetched_line(fetched: Iterable[_Fetched]) -> str:
    """`fetched to the client: N tensors, B bytes, from DEVICE` (with a count per device when
    they come from several)."""
    fetched = list(fetched)
    devices = Counter(f.device for f in fetched)
    sources = ", ".join(
        device + (f" ({n})" if len(devices) > 1 else "") for device, n in sorted(devices.items())
    )
    return (
        f"fetched to the client: {plural(len(fetched), 'tensor')}, "
        f"{plural(sum(f.bytes for f in fetched), 'byte')}, from {sources}"
    )
