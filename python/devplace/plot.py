"""Profile pictures: a per-device Gantt chart of one trace, and two traces compared.

Each device is a lane (threads of a device are rows within it), each op a bar coloured by op
type; ops TensorFlow made for gradients (names under `gradients/`) are hatched; a
cross-device transfer is an arrow from the end of the producing op to the start of the op
that consumed it on the other device. Bars narrower than a few pixels are widened to stay
visible; the numbers (busy time, makespan) always come from the real durations.
"""

from __future__ import annotations

import bisect
import dataclasses
import os
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PatchCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FuncFormatter

from devplace.comparison import Comparison, compare, format_bytes, format_time
from devplace.trace import Trace, TraceOp, read_trace

__all__ = ["compare_profiles", "comparison_figure", "plot_profile", "profile_figure"]

_PALETTE = colormaps["tab10"].colors
_OTHER = "#b0b0b0"
_TRANSFER = "#c0392b"
_MAX_TYPES = 9  # op types with their own colour; the rest are "other"
_MAX_ARROWS = 400  # beyond this, transfers are plain lines (arrows get slow and cluttered)
_LANE = 0.8  # lane height; lanes are 1 apart
_RUNTIME_NAME = re.compile(r"/_\d+$")
_MAX_LABELS = 300  # op labels tried, widest bars first
_MAX_EDGED = 400  # ops drawn with an outline; denser charts get none
_MIN_BAR = 0.003  # of the time axis: the narrowest drawn bar


def _type_colors(traces: Sequence[Trace]) -> dict[str, Any]:
    total: Counter[str] = Counter()
    for trace in traces:
        for op in trace.ops:
            total[op.op_type] += op.duration_us + 1e-3  # zero-length ops still count
    ranked = [t for t, _ in total.most_common()]
    return {t: _PALETTE[i] if i < _MAX_TYPES else _OTHER for i, t in enumerate(ranked)}


def _short(name: str) -> str:
    parts = name.split("/")
    return "/".join(parts[-2:]) if parts[0] == "gradients" else parts[-1]


def _is_gradient(op: TraceOp) -> bool:
    """An op `gradients` built; not the send/receive helpers TF's runtime adds (`.../_12`)."""
    return op.name.startswith("gradients/") and not _RUNTIME_NAME.search(op.name)


def _rows(trace: Trace, device: str) -> dict[int, int]:
    threads = sorted({op.thread for op in trace.ops if op.device == device})
    return {t: i for i, t in enumerate(threads)}


def _lane_label(trace: Trace, device: str, busy: dict[str, float]) -> str:
    ops = [op for op in trace.ops if op.device == device]
    gradient = sum(1 for op in ops if _is_gradient(op))
    count = f"{len(ops)} op{'' if len(ops) == 1 else 's'}"
    if gradient:
        count += f" ({gradient} gradient)"
    return f"{device}\n{count}\nbusy {format_time(busy.get(device, 0.0))}"


def _draw_timeline(
    ax: Any, trace: Trace, devices: list[str], xmax: float, colors: dict[str, Any]
) -> list[_Label]:
    """Bars, arrows and lane labels of one trace; returns the op labels to place."""
    lane = {d: i for i, d in enumerate(devices)}
    min_width = xmax * _MIN_BAR
    labels = []
    bars: dict[bool, list[Rectangle]] = {False: [], True: []}  # by "is a gradient op"
    for device in devices:
        rows = _rows(trace, device)
        height = _LANE / max(1, len(rows))
        ops = trace.ops_on(device)
        starts = {t: [o.start_us for o in ops if o.thread == t] for t in rows}  # sorted
        for op in ops:
            y = lane[device] + rows[op.thread] * height
            width = max(op.duration_us, min_width)
            bars[_is_gradient(op)].append(
                Rectangle(
                    (op.start_us, y),
                    width,
                    height * 0.92,
                    facecolor=colors.get(op.op_type, _OTHER),
                )
            )
            row_starts = starts[op.thread]
            after = bisect.bisect_right(row_starts, op.start_us)
            free_until = row_starts[after] if after < len(row_starts) else xmax * 1.02
            labels.append(
                _Label(
                    _short(op.name), op.start_us, op.start_us + width, free_until, y + height * 0.46
                )
            )
    edge = 0.4 if len(trace.ops) <= _MAX_EDGED else 0.0  # dense charts: edges would hide colour
    for gradient, patches in bars.items():
        collection = PatchCollection(
            patches, match_original=True, edgecolor="#333333", linewidth=edge
        )
        if gradient:
            collection.set_hatch("////")
        ax.add_collection(collection)
    _draw_transfers(ax, trace, lane)
    busy = trace.busy_us()
    ax.set_yticks([lane[d] + _LANE / 2 for d in devices])
    ax.set_yticklabels([_lane_label(trace, d, busy) for d in devices], fontsize=8)
    ax.set_ylim(len(devices) - 0.1, -0.1)
    ax.set_xlim(0, xmax * 1.02 if xmax > 0 else 1.0)
    _time_axis(ax, xmax)
    ax.set_ylabel("device")
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    return [dataclasses.replace(label, ax=ax) for label in labels]


def _time_unit(span_us: float) -> tuple[float, str]:
    if span_us >= 1e7:
        return 1e6, "s"
    if span_us >= 1e4:
        return 1e3, "ms"
    return 1.0, "µs"


def _time_axis(ax: Any, span_us: float) -> str:
    """Show µs data on the x axis in the unit that reads best; returns the unit."""
    scale, unit = _time_unit(span_us)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / scale:g}"))
    return unit


def _draw_transfers(ax: Any, trace: Trace, lane: dict[str, int]) -> None:
    flows = [f for f in trace.flows if f.source in lane and f.destination in lane]
    ends = [
        ((f.start_us, lane[f.source] + _LANE / 2), (f.end_us, lane[f.destination] + _LANE / 2))
        for f in flows
    ]
    if len(ends) > _MAX_ARROWS:
        ax.add_collection(LineCollection(ends, colors=_TRANSFER, linewidths=0.6, alpha=0.6))
        return
    for start, end in ends:
        ax.annotate(
            "",
            xy=end,
            xytext=start,
            arrowprops={
                "arrowstyle": "-|>",
                "color": _TRANSFER,
                "lw": 1.1,
                "shrinkA": 0,
                "shrinkB": 0,
            },
            annotation_clip=False,
        )


@dataclasses.dataclass(frozen=True)
class _Label:
    """An op label to place: inside its bar [x0, x1], or right of it before `free_until`."""

    text: str
    x0: float
    x1: float
    free_until: float
    y: float
    ax: Any = None


def _place_labels(fig: Any, labels: list[_Label]) -> None:
    """Write op names where they fit (inside the bar, else just right of it in free space),
    never over another label; the widest bars get theirs first."""
    renderer = fig.canvas.get_renderer()
    kept: list[Any] = []
    for label in sorted(labels, key=lambda c: c.x0 - c.x1)[:_MAX_LABELS]:
        to_px = label.ax.transData.transform
        (left, _), (right, _), (limit, _) = to_px(
            [(label.x0, 0), (label.x1, 0), (label.free_until, 0)]
        )
        text = label.ax.text(
            (label.x0 + label.x1) / 2,
            label.y,
            label.text,
            ha="center",
            va="center",
            fontsize=7,
            clip_on=True,
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.75, "pad": 0.5},
        )
        box = text.get_window_extent(renderer)
        if box.width > right - left - 2:
            text.set_x(label.x1)
            text.set_ha("left")
            text.set_text(" " + label.text)
            box = text.get_window_extent(renderer)
            if box.x1 > limit - 4:
                text.remove()
                continue
        if any(box.overlaps(other) for other in kept):
            text.remove()
            continue
        kept.append(box)


def _legend_handles(colors: dict[str, Any], with_transfers: bool) -> list[Any]:
    handles: list[Any] = [
        Patch(facecolor=c, edgecolor="#333333", label=t) for t, c in colors.items() if c != _OTHER
    ]
    if _OTHER in colors.values():
        handles.append(Patch(facecolor=_OTHER, edgecolor="#333333", label="other op types"))
    handles.append(Patch(facecolor="white", edgecolor="#333333", hatch="////", label="gradient op"))
    if with_transfers:
        handles.append(Line2D([], [], color=_TRANSFER, lw=1.5, label="cross-device transfer"))
    return handles


def _title(label: str, trace: Trace) -> str:
    size = trace.transfer_bytes
    return (
        f"{label}: {len(trace.ops)} ops on {len(trace.devices)} devices, "
        f"makespan {format_time(trace.makespan_us)}, {trace.transfer_count} transfers "
        f"({'bytes unknown' if size is None else format_bytes(size)})"
    )


def _save(fig: Figure, out: str | os.PathLike[str]) -> str:
    path = os.fspath(out)
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot write picture {path!r}: folder {folder!r} does not exist")
    fig.savefig(path, dpi=120)
    return path


def _finish(fig: Figure, labels: list[_Label]) -> None:
    fig.canvas.draw()
    fig.set_layout_engine("none")  # freeze the layout so label positions are final
    _place_labels(fig, labels)


def profile_figure(trace_or_path: Any, title: str | None = None) -> tuple[Figure, Trace]:
    """The Gantt chart of a trace as a matplotlib `Figure` (for notebooks), with the `Trace`."""
    trace = read_trace(trace_or_path)
    colors = _type_colors([trace])
    height = 1.6 + 0.75 * len(trace.devices)
    fig = Figure(figsize=(13, max(3.2, height)), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    xmax = trace.makespan_us
    labels = _draw_timeline(ax, trace, trace.devices, xmax, colors)
    ax.set_xlabel(f"time since the first op started ({_time_unit(xmax)[1]})")
    ax.set_title(_title(title or trace.source.strip("'\""), trace), fontsize=10)
    ax.legend(
        handles=_legend_handles(colors, bool(trace.flows)),
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
        title="op type",
        title_fontsize=8,
    )
    _finish(fig, labels)
    return fig, trace


def plot_profile(
    trace_or_path: Any, out: str | os.PathLike[str], title: str | None = None
) -> Trace:
    """Draw a trace (a path, `Profile.trace`, or `Trace`) as a per-device Gantt chart to `out`
    (PNG, SVG or PDF by extension). Returns the parsed `Trace`: its `devices` are the lanes."""
    fig, trace = profile_figure(trace_or_path, title)
    _save(fig, out)
    return trace


def comparison_figure(
    a: Any, b: Any, labels: tuple[str, str] | None = None, title: str | None = None
) -> tuple[Figure, Comparison]:
    """The picture of `compare_profiles` as a matplotlib `Figure`, with its numbers."""
    ta, tb = read_trace(a), read_trace(b)
    comparison = compare(ta, tb, labels)
    devices = comparison.devices
    colors = _type_colors([ta, tb])
    xmax = max(ta.makespan_us, tb.makespan_us)
    lane_height = 0.75 * len(devices) + 1.0
    fig = Figure(figsize=(15, max(6.5, 2 * lane_height + 1.8)), layout="constrained")
    FigureCanvasAgg(fig)
    if title:
        fig.suptitle(title, fontsize=11)
    grid = fig.add_gridspec(2, 2, width_ratios=[3.2, 1.2])
    top = fig.add_subplot(grid[0, 0])
    bottom = fig.add_subplot(grid[1, 0], sharex=top)
    op_labels: list[_Label] = []
    for ax, trace, summary in ((top, ta, comparison.a), (bottom, tb, comparison.b)):
        op_labels += _draw_timeline(ax, trace, devices, xmax, colors)
        ax.set_title(_title(summary.label, trace), fontsize=10, loc="left")
    bottom.set_xlabel(
        f"time since the first op started ({_time_unit(xmax)[1]}); same scale in both"
    )
    _draw_busy(fig.add_subplot(grid[0, 1]), comparison)
    _draw_table(fig.add_subplot(grid[1, 1]), comparison)
    fig.legend(
        handles=_legend_handles(colors, bool(ta.flows or tb.flows)),
        loc="outside lower center",
        ncol=7,
        fontsize=8,
    )
    _finish(fig, op_labels)
    return fig, comparison


def compare_profiles(
    a: Any,
    b: Any,
    out: str | os.PathLike[str],
    labels: tuple[str, str] | None = None,
    title: str | None = None,
) -> Comparison:
    """Draw two traces one above the other on the same lanes and time scale, with per-device
    busy time and a summary table beside them, to `out`; returns the numbers as a `Comparison`."""
    fig, comparison = comparison_figure(a, b, labels, title)
    _save(fig, out)
    return comparison


def _draw_busy(ax: Any, comparison: Comparison) -> None:
    devices = comparison.devices
    height = 0.38
    for offset, summary, color in (
        (-height / 2, comparison.a, "#4c72b0"),
        (height / 2, comparison.b, "#dd8452"),
    ):
        values = [summary.busy_us.get(d, 0.0) for d in devices]
        ys = [i + offset for i in range(len(devices))]
        bars = ax.barh(ys, values, height=height, color=color, label=summary.label)
        ax.bar_label(bars, labels=[format_time(v) for v in values], fontsize=7, padding=2)
    ax.set_yticks(range(len(devices)))
    ax.set_yticklabels(devices, fontsize=8)
    ax.invert_yaxis()
    unit = _time_axis(ax, max([*comparison.a.busy_us.values(), *comparison.b.busy_us.values(), 0]))
    ax.set_xlabel(f"busy time ({unit})")
    ax.set_title("per-device busy time", fontsize=10)
    ax.margins(x=0.3)
    ax.legend(fontsize=8, loc="lower right")


def _draw_table(ax: Any, comparison: Comparison) -> None:
    ax.axis("off")
    rows = [r for r in comparison.rows() if not r[0].startswith("busy ")]
    table = ax.table(
        cellText=[list(r) for r in rows],
        colLabels=["", comparison.a.label, comparison.b.label],
        loc="upper center",
        cellLoc="left",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    table.scale(1.0, 1.5)
    table.auto_set_column_width([0, 1, 2])
    ax.set_title("summary", fontsize=10)
