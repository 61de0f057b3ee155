"""The drawing of profile pictures: a trace's per-device Gantt chart and two traces compared,
as matplotlib figures made from the `Trace` and `Comparison` objects they are handed (reading
files, comparing and writing pictures are `devplace.views.plot`'s). Its rules are plot's module doc.
"""

from __future__ import annotations

import bisect
import dataclasses
import textwrap
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.path import Path
from matplotlib.ticker import FuncFormatter
from matplotlib.transforms import IdentityTransform

from devplace.adapter.devices import caveat_lines
from devplace.core.errors import Error
from devplace.core.formatting import fetched_line, format_bytes, format_time, plural, time_unit

if TYPE_CHECKING:  # drawn from the objects it is handed: the views import no facts module
    from devplace.facts.comparison import Comparison
    from devplace.facts.trace import Trace, TraceOp

__all__ = [
    "SIZES",
    "TRANSFER_COLOR",
    "PictureError",
    "comparison_timelines",
    "op_color",
    "timeline_figure",
]


@dataclasses.dataclass(frozen=True)
class _Size:
    width_in: float
    font_pt: float
    row_in: float  # height per device row
    legend_columns: int


#: Figure sizes: a screen, a full page width, one column of a two-column paper.
SIZES = {
    "screen": _Size(13.0, 8.0, 0.8, 7),
    "page": _Size(7.0, 7.0, 0.6, 5),
    "column": _Size(3.5, 7.0, 0.55, 3),
}

#: The colour of memory copies and cross-device transfers (tab:red); no op type gets a red.
TRANSFER_COLOR = "#d62728"
# Common op types: tab20's strong shades, then its light ones (no reds, no greys), each its own.
_FIXED = dict(
    zip(
        "MatMul Sin Cos Mul AddV2 Const VariableV2 Identity "
        "BiasAdd Relu Fill Neg Sum Tanh Conv2D _Retval".split(),
        [
            colormaps["tab20"].colors[i]
            for i in (0, 2, 4, 8, 10, 12, 16, 18, 1, 3, 5, 9, 11, 13, 17, 19)
        ],
        strict=True,
    )
)
# Every other type: a stable hash into tab20b without its reds, so it never takes a common
# type's colour (two rare types may share one).
_HASHED = [c for i, c in enumerate(colormaps["tab20b"].colors) if i not in (12, 13, 14, 15)]
_AXES_SHARE = 0.6  # of the figure's width a timeline's title can use (narrowest case)
_MAX_LEGEND = 14  # op types named in the legend, the busiest first
_MAX_ARROWS = 400  # beyond this, transfers are plain lines (arrows get slow and cluttered)
_LANE = 0.8  # row height; rows are 1 apart
_MAX_LABELS = 300  # op labels tried, widest bars first
_MAX_EDGED = 400  # ops drawn with an outline; denser charts get none
_MIN_BAR = 0.003  # of the time axis: the narrowest drawn bar
_DENSE_BINS = 4000  # a row of more bars is drawn as what shows at 1/4000 of the time axis


class PictureError(Error, ValueError):
    """A picture path devplace cannot write: unsupported format, or no such folder."""


def op_color(op_type: str) -> Any:
    """The colour of an op type, the same in every picture devplace draws (never the red of
    copies and transfers)."""
    if op_type in _FIXED:
        return _FIXED[op_type]
    return _HASHED[zlib.crc32(op_type.encode()) % len(_HASHED)]


def _size(size: str) -> _Size:
    if size not in SIZES:
        raise PictureError(f"unknown picture size {size!r}; use one of {', '.join(SIZES)}")
    return SIZES[size]


def _rows(trace: Trace, device: str) -> list[tuple[str, Any]]:
    """The sub-rows of a device: ("op", thread) per thread, then ("kernel", None) and
    ("copy", None) when the device has any."""
    threads = sorted({op.thread for op in trace.on_device("op").get(device, [])})
    rows: list[tuple[str, Any]] = [("op", t) for t in threads]
    for kind in ("kernel", "copy"):
        if device in trace.on_device(kind):
            rows.append((kind, None))
    return rows or [("op", 0)]


def _short(name: str) -> str:
    parts = name.split("/")
    return "/".join(parts[-2:]) if parts[0] == "gradients" else parts[-1]


def _is_gradient(op: TraceOp) -> bool:
    """An op `gradients` built; not the send/receive helpers TF's runtime adds (`.../_12`)."""
    return op.name.startswith("gradients/") and not op.by_runtime


def _device_label(trace: Trace, device: str, busy: dict[str, float], narrow: bool) -> str:
    ops = [op for op in trace.graph_ops if op.device == device]
    gradient = sum(1 for op in ops if op.name.startswith("gradients/"))  # _is_gradient
    count = plural(len(ops), "op") + (f" ({gradient} grad.)" if gradient else "")
    name = device.removeprefix("/device:") if narrow else device
    return f"{name}\n{count}\nbusy {format_time(busy.get(device, 0.0))}"


def _row_label(trace: Trace, device: str, kind: str, narrow: bool) -> str:
    if kind == "op" or narrow:
        return {"op": "ops", "kernel": "kernels", "copy": "copies"}[kind]
    entries = [
        e for e in (trace.kernels if kind == "kernel" else trace.copies) if e.device == device
    ]
    busy = format_time(trace.busy_us(kind)[device])
    if kind == "kernel":
        return f"{plural(len(entries), 'kernel')}, {busy}"
    directions = Counter(e.direction or "copy" for e in entries)
    copies = "copy" if len(entries) == 1 else "copies"
    return f"{', '.join(f'{n} {d}' for d, n in sorted(directions.items()))} {copies}, {busy}"


@dataclasses.dataclass(frozen=True)
class _Label:
    """An op label to place: inside its bar [x0, x1], or right of it before `free_until`."""

    text: str
    x0: float
    x1: float
    free_until: float
    y: float
    font_pt: float
    ax: Any = None


@dataclasses.dataclass
class _Bars:
    """Bars of one style, as numbers gathered row by row: a collection is built from them at
    once (one matplotlib patch per op is slow and large for traces of 100k ops)."""

    rows: list[Any] = dataclasses.field(default_factory=list)  # [x, width, y, height] per row
    colors: list[Any] = dataclasses.field(default_factory=list)  # an RGBA array per row

    def add(self, x: Any, width: Any, rgba: Any, y: float, height: float) -> None:
        """A row's bars: from `x` (an array), `width` wide (an array), coloured `rgba` (an
        array of one RGBA row per bar), `y` to `y + height`."""
        self.rows.append(np.stack([x, width, np.full(len(x), y), np.full(len(x), height)]))
        self.colors.append(rgba)

    def collection(self, **style: Any) -> Collection:
        """The bars as one collection: a unit square placed by one transform per bar."""
        x, width, y, height = np.concatenate([np.empty((4, 0)), *self.rows], axis=1)
        rgba = np.concatenate([np.empty((0, 4)), *self.colors])
        return _Placed(
            Path.unit_rectangle(), _placements(x, y, width, height), facecolors=rgba, **style
        )


def _as_drawn(starts: Any, widths: Any, color: Any, palette: Any, xmax: float) -> Any:
    """A row's bars (`starts`, `widths`, each one's index `color` into the RGBA rows of
    `palette`) as (starts, widths, RGBA) to draw. A row of more than `_DENSE_BINS` bars becomes
    what drawing them by start time shows (the last bar drawn over a point hides the others)
    at `_DENSE_BINS` points across the time axis, one bar per run of one colour: Agg takes
    about 3 µs a bar, so 100k bars narrower than a pixel cost a second and show no more."""
    if len(starts) <= _DENSE_BINS:
        return starts, widths, palette[color]
    order = np.argsort(starts, kind="stable")
    starts, ends, color = starts[order], (starts + widths)[order], color[order]
    edges = np.linspace(0.0, xmax * 1.02, _DENSE_BINS + 1)
    shown = _last_covering(starts, ends, (edges[:-1] + edges[1:]) / 2)
    shown_color = np.where(shown >= 0, color[shown], -1)
    change = np.flatnonzero(np.diff(shown_color)) + 1
    run_starts = np.concatenate([[0], change])
    run_ends = np.concatenate([change, [_DENSE_BINS]])
    drawn = shown_color[run_starts] >= 0
    first, after = edges[run_starts[drawn]], edges[run_ends[drawn]]
    return first, after - first, palette[shown_color[run_starts[drawn]]]


def _last_covering(starts: Any, ends: Any, points: Any) -> Any:
    """For each of `points`, the index of the last bar (`starts` sorted) with start <= point
    < end, or -1: binary lifting over a table of the bars' greatest end in windows of 2^l."""
    windows = [np.concatenate([[np.inf], ends])]  # [l][q]: max end of bars q-2^l .. q-1
    while 2 ** len(windows) <= len(ends):
        half, width = windows[-1], 2 ** (len(windows) - 1)
        wider = np.full(len(half), np.inf)
        wider[2 * width :] = np.maximum(half[2 * width :], half[width:-width])
        windows.append(wider)
    started = np.searchsorted(starts, points, side="right")  # bars 0 .. started-1 began
    for level in range(len(windows) - 1, -1, -1):  # drop the longest run of bars ended before
        ended = windows[level][started] <= points
        started = np.where(ended, started - 2**level, started)
    return started - 1


class _Placed(Collection):
    """One shape (`unit`: the unit square, or the diagonal of it) drawn many times, each under
    its own affine transform (`placed`, into data coordinates): matplotlib then makes no `Path`
    per bar or line, which for 100k of them takes seconds and 100 MB."""

    def __init__(self, unit: Path, placed: Any, **style: Any):
        super().__init__(
            offsets=np.zeros((len(placed), 2)), offset_transform=IdentityTransform(), **style
        )
        self._paths = [unit]
        self._placed = placed

    def get_transforms(self) -> Any:
        """One transform per shape drawn."""
        return self._placed


def _placements(x: Any, y: Any, width: Any, height: Any) -> Any:
    """Affine transforms taking the unit square to the boxes at (`x`, `y`) of `width` by
    `height` (arrays)."""
    placed = np.zeros((len(x), 3, 3))
    placed[:, 0, 0], placed[:, 0, 2], placed[:, 1, 1], placed[:, 1, 2] = width, x, height, y
    placed[:, 2, 2] = 1.0
    return placed


@dataclasses.dataclass
class _Boxes:
    """What a timeline draws, gathered row by row: op bars (gradient ops apart), copies, and
    the op labels to place."""

    ops: _Bars = dataclasses.field(default_factory=_Bars)
    gradients: _Bars = dataclasses.field(default_factory=_Bars)
    copies: _Bars = dataclasses.field(default_factory=_Bars)
    labels: list[_Label] = dataclasses.field(default_factory=list)


def _row_entries(trace: Trace, device: str, kind: str, thread: Any) -> list[TraceOp]:
    """The entries of one row of `device`'s lane, by start time."""
    if kind == "op":
        return [e for e in trace.ops_on(device) if e.thread == thread]
    return list(trace.on_device(kind).get(device, []))


def _draw_row(
    boxes: _Boxes,
    entries: list[TraceOp],
    kind: str,
    y: float,
    height: float,
    xmax: float,
    size: _Size,
) -> None:
    """One bar per entry (at least `_MIN_BAR` of the chart wide), and a label for each of the
    row's `_MAX_LABELS` widest ops (no more can be placed)."""
    starts = np.array([e.start_us for e in entries], float)
    widths = np.maximum(np.array([e.duration_us for e in entries], float), xmax * _MIN_BAR)
    if kind == "copy":
        red = np.array([to_rgba(TRANSFER_COLOR)])
        drawn = _as_drawn(starts, widths, np.zeros(len(entries), int), red, xmax)
        boxes.copies.add(*drawn, y, height * 0.92)
        return
    types = sorted({e.op_type for e in entries})
    palette = np.array([to_rgba(op_color(t)) for t in types]).reshape(-1, 4)
    index = {t: i for i, t in enumerate(types)}
    color = np.array([index[e.op_type] for e in entries], int)
    gradient = np.array(
        [e.name.startswith("gradients/") and _is_gradient(e) for e in entries], bool
    )
    for bars, mine in ((boxes.ops, ~gradient), (boxes.gradients, gradient)):
        drawn = _as_drawn(starts[mine], widths[mine], color[mine], palette, xmax)
        bars.add(*drawn, y, height * 0.92)
    if kind != "op":
        return
    # _place_labels' order (x0 - x1, widest first), so its pick from all rows is unchanged
    widest = np.argsort(starts - (starts + widths), kind="stable")[:_MAX_LABELS]
    ordered = starts.tolist()
    for i in sorted(widest.tolist()):
        entry = entries[i]
        after = bisect.bisect_right(ordered, entry.start_us, lo=i)
        free_until = ordered[after] if after < len(ordered) else xmax * 1.02
        label = _Label(
            _short(entry.name),
            entry.start_us,
            entry.start_us + float(widths[i]),
            free_until,
            y + height * 0.46,
            size.font_pt,
        )
        boxes.labels.append(label)


def _add_boxes(ax: Any, trace: Trace, boxes: _Boxes) -> None:
    edge = 0.4 if len(trace.ops) <= _MAX_EDGED else 0.0  # dense charts: edges would hide colour
    for hatch, bars in ((None, boxes.ops), ("////", boxes.gradients), (None, boxes.copies)):
        collection = bars.collection(edgecolor="#333333", linewidth=edge)
        if hatch:
            collection.set_hatch(hatch)
        ax.add_collection(collection, autolim=False)  # the axes' limits are set, not fitted


def _label_axes(
    ax: Any,
    trace: Trace,
    devices: list[str],
    xmax: float,
    size: _Size,
    side_ticks: list[tuple[float, str]],
) -> None:
    """Device rows with their numbers, the time axis, and a GPU's sub-rows on the right."""
    busy = trace.busy_us()
    narrow = size.width_in < 5
    ax.set_yticks([i + _LANE / 2 for i in range(len(devices))])
    ax.set_yticklabels(
        [_device_label(trace, d, busy, narrow) for d in devices], fontsize=size.font_pt
    )
    ax.set_ylim(len(devices) - 0.1, -0.1)
    ax.set_xlim(0, xmax * 1.02 if xmax > 0 else 1.0)
    ax.tick_params(labelsize=size.font_pt)
    _time_axis(ax, xmax)
    ax.set_ylabel("device", fontsize=size.font_pt)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    if side_ticks:
        side = ax.secondary_yaxis("right")
        side.set_yticks([y for y, _ in side_ticks], [t for _, t in side_ticks])
        side.tick_params(labelsize=size.font_pt, length=0)


def _draw_timeline(
    ax: Any, trace: Trace, devices: list[str], xmax: float, size: _Size
) -> list[_Label]:
    """Bars, arrows and row labels of one trace; returns the op labels to place."""
    narrow = size.width_in < 5
    boxes = _Boxes()
    side_ticks: list[tuple[float, str]] = []
    for lane, device in enumerate(devices):
        rows = _rows(trace, device)
        height = _LANE / len(rows)
        for r, (kind, thread) in enumerate(rows):
            y = lane + r * height
            if rows[-1][0] != "op" and (kind != "op" or r == 0):  # a GPU: name its sub-rows
                side_ticks.append((y + height / 2, _row_label(trace, device, kind, narrow)))
            _draw_row(boxes, _row_entries(trace, device, kind, thread), kind, y, height, xmax, size)
    _add_boxes(ax, trace, boxes)
    _draw_transfers(ax, trace, {d: i for i, d in enumerate(devices)}, 0.6 if narrow else 1.1)
    _label_axes(ax, trace, devices, xmax, size, side_ticks)
    return [dataclasses.replace(label, ax=ax) for label in boxes.labels]


def _time_axis(ax: Any, span_us: float) -> str:
    """Show µs data on the x axis in `time_unit(span_us)`; returns the unit."""
    scale, unit = time_unit(span_us)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / scale:g}"))
    return unit


def _draw_transfers(ax: Any, trace: Trace, lane: dict[str, int], width: float) -> None:
    """One arrow per transfer the title counts, from when it left its device to when the
    destination first read it."""
    if len(trace.transfers) > _MAX_ARROWS:
        sent, received = np.array(trace.spans, float).reshape(-1, 2).T
        rows = np.array([(lane[t.source], lane[t.destination]) for t in trace.transfers], float)
        y0, y1 = rows.T + _LANE / 2
        diagonal = Path([(0.0, 0.0), (1.0, 1.0)])
        placed = _placements(sent, y0, received - sent, y1 - y0)
        style = {"facecolors": "none", "edgecolors": TRANSFER_COLOR, "linewidths": 0.6}
        ax.add_collection(_Placed(diagonal, placed, alpha=0.6, **style), autolim=False)
        return
    ends = [
        ((sent, lane[t.source] + _LANE / 2), (received, lane[t.destination] + _LANE / 2))
        for t, (sent, received) in zip(trace.transfers, trace.spans, strict=True)
    ]
    for start, end in ends:
        ax.annotate(
            "",
            xy=end,
            xytext=start,
            arrowprops={
                "arrowstyle": "-|>",
                "color": TRANSFER_COLOR,
                "lw": width,
                "shrinkA": 0,
                "shrinkB": 0,
            },
            annotation_clip=False,
        )


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
            fontsize=label.font_pt,
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


def _legend_handles(traces: Sequence[Trace]) -> list[Any]:
    time: Counter[str] = Counter()
    for trace in traces:
        for op in [*trace.ops, *trace.kernels]:
            time[op.op_type] += op.duration_us + 1e-3  # zero-length ops still count
    ranked = [t for t, _ in time.most_common()]
    handles: list[Any] = [
        Patch(facecolor=op_color(t), edgecolor="#333333", label=t) for t in ranked[:_MAX_LEGEND]
    ]
    if len(ranked) > _MAX_LEGEND:
        handles.append(
            Patch(
                facecolor="white",
                edgecolor="none",
                label="+" + plural(len(ranked) - _MAX_LEGEND, "more type"),
            )
        )
    handles.append(Patch(facecolor="white", edgecolor="#333333", hatch="////", label="gradient op"))
    copies = {
        "RPC receive" if c.direction == "RPC" else "memory copy" for t in traces for c in t.copies
    }
    if copies:
        label = " / ".join(sorted(copies))
        handles.append(Patch(facecolor=TRANSFER_COLOR, edgecolor="#333333", label=label))
    if any(t.transfers for t in traces):
        handles.append(Line2D([], [], color=TRANSFER_COLOR, lw=1.5, label="cross-device transfer"))
    return handles


def _title(label: str, trace: Trace, size: _Size) -> str:
    known = trace.transfer_bytes
    text = (
        f"{label}: {plural(len(trace.graph_ops), 'op')} on {plural(len(trace.devices), 'device')}, "
        f"makespan {format_time(trace.makespan_us)}, {plural(trace.transfer_count, 'transfer')} "
        f"({'bytes unknown' if known is None else format_bytes(known)})"
    )
    lines = [text, fetched_line(trace.fetched)] if trace.fetched else [text]
    width = _wrap_width(size, _AXES_SHARE)
    return "\n".join(wrapped for line in lines for wrapped in textwrap.wrap(line, width))


def _wrap_width(size: _Size, share: float = 1.0) -> int:
    """Characters of text at `size.font_pt` that fit across `share` of the figure's width
    (about 0.55 em each)."""
    return max(30, int(share * size.width_in * 72 / (0.55 * size.font_pt)))


def _finish(fig: Figure, labels: list[_Label]) -> None:
    fig.draw_without_rendering()  # lays the figure out; savefig renders it
    fig.set_layout_engine("none")  # freeze the layout so label positions are final
    _place_labels(fig, labels)


def _new_figure(size: _Size, height_in: float) -> Figure:
    fig = Figure(figsize=(size.width_in, height_in), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _legend(fig: Figure, traces: Sequence[Trace], size: _Size) -> None:
    fig.legend(
        handles=_legend_handles(traces),
        loc="outside lower center",
        ncol=size.legend_columns,
        fontsize=size.font_pt,
        frameon=False,
    )


def _draw_busy(ax: Any, comparison: Comparison, size: _Size) -> None:
    devices = comparison.devices
    height = 0.38
    for offset, summary, color in (
        (-height / 2, comparison.a, "#4c72b0"),
        (height / 2, comparison.b, "#dd8452"),
    ):
        values = [summary.busy_us.get(d, 0.0) for d in devices]
        ys = [i + offset for i in range(len(devices))]
        bars = ax.barh(ys, values, height=height, color=color, label=summary.label)
        ax.bar_label(
            bars, labels=[format_time(v) for v in values], fontsize=size.font_pt, padding=2
        )
    ax.set_yticks(range(len(devices)))
    ax.set_yticklabels(devices, fontsize=size.font_pt)
    ax.tick_params(labelsize=size.font_pt)
    ax.invert_yaxis()
    unit = _time_axis(ax, max([*comparison.a.busy_us.values(), *comparison.b.busy_us.values(), 0]))
    ax.set_xlabel(f"busy time ({unit})", fontsize=size.font_pt)
    ax.set_title("per-device busy time", fontsize=size.font_pt)
    ax.margins(x=0.35)
    ax.legend(fontsize=size.font_pt, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)


def _draw_table(ax: Any, comparison: Comparison, size: _Size) -> None:
    ax.axis("off")
    rows = [r for r in comparison.rows() if not r[0].startswith(("busy ", "└ "))]
    table = ax.table(
        cellText=[list(r) for r in rows],
        colLabels=["", comparison.a.label, comparison.b.label],
        loc="upper center",
        cellLoc="left",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(size.font_pt)
    table.scale(1.0, 1.4)
    table.auto_set_column_width([0, 1, 2])
    ax.set_title("summary", fontsize=size.font_pt)


def timeline_figure(trace: Trace, title: str | None = None, size: str = "screen") -> Figure:
    """The Gantt chart of `trace` as a matplotlib `Figure`, titled `title` (else its source)."""
    look = _size(size)
    fig = _new_figure(look, max(3.2, 2.0 + look.row_in * len(trace.devices)))
    ax = fig.add_subplot()
    xmax = trace.makespan_us
    labels = _draw_timeline(ax, trace, trace.devices, xmax, look)
    ax.set_xlabel(f"time since the first op started ({time_unit(xmax)[1]})", fontsize=look.font_pt)
    heading = _title(title or trace.source, trace, look)
    lines = [heading, *caveat_lines(trace.devices, _wrap_width(look, _AXES_SHARE))]
    ax.set_title("\n".join(lines), fontsize=look.font_pt + (2 if look.width_in > 5 else 0))
    _legend(fig, [trace], look)
    _finish(fig, labels)
    return fig


def comparison_timelines(
    ta: Trace, tb: Trace, comparison: Comparison, title: str | None = None, size: str = "screen"
) -> Figure:
    """Traces `ta` and `tb` one above the other on the same rows and time scale, with
    `comparison`'s per-device busy time and summary table, as a matplotlib `Figure`."""
    look = _size(size)
    devices = comparison.devices
    xmax = max(ta.makespan_us, tb.makespan_us)
    timeline_in = look.row_in * len(devices) + 1.0
    narrow = look.width_in < 5
    height = (
        2 * timeline_in + 0.5 * len(devices) + 3.2 if narrow else max(6.5, 2 * timeline_in + 1.8)
    )
    fig = _new_figure(look, height)
    heading = [title] if title else []
    heading += caveat_lines(devices, _wrap_width(look, 0.9))
    if heading:
        fig.suptitle("\n".join(heading), fontsize=look.font_pt + (0 if narrow else 2))
    if narrow:  # one column: the timelines, then busy time and the summary below them
        grid = fig.add_gridspec(
            4, 1, height_ratios=[timeline_in, timeline_in, 0.5 * len(devices) + 0.6, 1.6]
        )
        cells = [grid[0, 0], grid[1, 0], grid[2, 0], grid[3, 0]]
    else:
        grid = fig.add_gridspec(2, 2, width_ratios=[3.2, 1.2])
        cells = [grid[0, 0], grid[1, 0], grid[0, 1], grid[1, 1]]
    top = fig.add_subplot(cells[0])
    bottom = fig.add_subplot(cells[1], sharex=top)
    op_labels: list[_Label] = []
    for ax, trace, summary in ((top, ta, comparison.a), (bottom, tb, comparison.b)):
        op_labels += _draw_timeline(ax, trace, devices, xmax, look)
        ax.set_title(_title(summary.label, trace, look), fontsize=look.font_pt, loc="left")
    since = "time" if narrow else "time since the first op started"
    bottom.set_xlabel(f"{since} ({time_unit(xmax)[1]}); same scale in both", fontsize=look.font_pt)
    _draw_busy(fig.add_subplot(cells[2]), comparison, look)
    _draw_table(fig.add_subplot(cells[3]), comparison, look)
    _legend(fig, [ta, tb], look)
    _finish(fig, op_labels)
    return fig
