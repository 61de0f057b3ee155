"""Rich display of devplace's objects in Jupyter (and, through the bridge, Pluto and IJulia).

Each devplace class a user prints has a one-line `_repr_html_` or `_repr_mimebundle_` that
calls a function here: placement reports, comparisons and automatic placements as HTML tables
(each device its own colour), profiles, traced runs and saved profiles (`dp.read_trace(path)`)
as their timeline picture (PNG and SVG), clusters and sessions as their tasks and addresses.
Plain `repr`/`str` stay what they are for the terminal. Loaded on first display only, so
`import devplace` does not pay for it.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from devplace.core.formatting import fetched_line, format_bytes, format_time, plural

__all__ = [
    "MAX_ROWS",
    "PICTURE_TYPES",
    "autoplacement_html",
    "cluster_html",
    "comparison_html",
    "device_colors",
    "mime_data",
    "mime_types",
    "picture_bundle",
    "placement_html",
    "session_html",
]

#: Table rows shown before the rest is summarised (`table()`, `to_csv()` have every row).
MAX_ROWS = 400
#: The MIME types of a picture, in the order a notebook prefers them.
PICTURE_TYPES = ("image/svg+xml", "image/png")
# Light shades (tab20's), one per device in the order devices sort: dark text stays readable.
_PALETTE = (
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#dbdb8d",
    "#9edae5",
    "#ff9896",
    "#c7c7c7",
)
_STYLE = (
    "<style>.devplace td,.devplace th{text-align:left;padding:2px 8px;font-family:monospace}"
    ".devplace caption{text-align:left;font-weight:bold}</style>"
)
_DPI = 80  # a 13-inch timeline is about 1000 pixels wide


def device_colors(devices: Iterable[str]) -> dict[str, str]:
    """A background colour for each device, the same for the same sorted device list."""
    return {d: _PALETTE[i % len(_PALETTE)] for i, d in enumerate(sorted(set(devices)))}


def _cell(text: Any, color: str | None = None) -> str:
    style = f' style="background:{color}"' if color else ""
    return f"<td{style}>{escape(str(text))}</td>"


def _table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "", raw: bool = False
) -> str:
    """An HTML table; cells are escaped unless `raw` (then they are `<td>` cells already)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = [r if raw else "".join(_cell(c) for c in r) for r in rows[:MAX_ROWS]]
    more = len(rows) - MAX_ROWS
    if more > 0:
        body.append(f'<td colspan="{len(headers)}">… {plural(more, "more row")}</td>')
    title = f"<caption>{escape(caption)}</caption>" if caption else ""
    lines = "".join(f"<tr>{r}</tr>" for r in body)
    return f'<table class="devplace">{title}<tr>{head}</tr>{lines}</table>'


def _legend(colors: dict[str, str]) -> str:
    return " ".join(
        f'<span style="background:{c};padding:0 6px;font-family:monospace">{escape(d)}</span>'
        for d, c in colors.items()
    )


def _notes(lines: Iterable[str]) -> str:
    return "".join(f"<p>{escape(line)}</p>" for line in lines)


def placement_html(report: Any) -> str:
    """A `PlacementReport` as HTML: the summary line, one row per op (requested and actual
    device, the actual one coloured by device), then the transfers with their bytes."""
    colors = device_colors(report.devices)
    sent, _ = report.sent_per_op()
    rows = [
        _cell(op.name)
        + _cell(op.type_shown)
        + _cell(op.requested or "-")
        + _cell(op.actual + (" *" if op.moved else ""), colors[op.actual])
        + _cell(sent[op.name] or "")
        for op in report.ops
    ]
    summary = (
        f"{plural(len(report.ops), 'op')} on {plural(len(colors), 'device')}; "
        f"{plural(report.transfer_count, 'cross-device transfer')}, "
        f"{format_bytes(report.transfer_bytes)}"
        + (
            f"; {plural(len(report.moved), 'op')} (*) ran elsewhere than requested"
            if report.moved
            else ""
        )
    )
    parts = [_STYLE, f"<p><b>Placement</b>: {escape(summary)}</p>", f"<p>{_legend(colors)}</p>"]
    parts.append(
        _table(("op", "type", "requested", "actual", "transfers out"), rows, "ops", raw=True)
    )
    if report.transfers:
        crossed = report.transfer_rows()
        parts.append(_transfers_table(report.TRANSFER_HEADERS, crossed, colors))
    if report.fetched:
        parts.append(_notes([fetched_line(report.fetched)]))
    if report.optimized_away:
        parts.append(_notes([f"optimized away by TF: {', '.join(report.optimized_away)}"]))
    return "".join(parts)


def _transfers_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], colors: dict[str, str]
) -> str:
    """A report's `transfer_rows`, each device coloured."""
    cells = [
        "".join(_cell(text, colors.get(text) if i in (1, 2) else None) for i, text in enumerate(r))
        for r in rows
    ]
    return _table(headers, cells, "transfers", raw=True)


def comparison_html(comparison: Any) -> str:
    """A `Comparison` as HTML: one column per profile, then the notes that apply."""
    a, b = comparison.a, comparison.b
    return (
        _STYLE
        + _table(("", a.label, b.label), comparison.rows(), f"{a.label} vs {b.label}")
        + _notes(comparison.notes(width=10_000))
    )


def autoplacement_html(placement: Any) -> str:
    """An `AutoPlacement` as HTML: the pick and where its ops go, every candidate's predicted
    and measured step time, and why it was picked (`explain()` where it exists, else the
    notes)."""
    counts: dict[str, int] = {}
    for device in placement.devices.values():
        counts[device] = counts.get(device, 0) + 1
    colors = device_colors(counts)
    head = (
        f"<p><b>autoplace</b>: {escape(placement.strategy)} (asked {escape(placement.asked)}), "
        f"predicted step {escape(format_time(placement.predicted_step_time))}; "
        + ", ".join(
            f'<span style="background:{colors[d]}">{escape(d)}</span>: {plural(n, "op")}'
            for d, n in sorted(counts.items())
        )
        + "</p>"
    )
    explain = getattr(placement, "explain", None)
    reason = f"<pre>{escape(explain())}</pre>" if callable(explain) else _notes(placement.notes)
    return _STYLE + head + _candidates_table(placement) + reason


def _candidates_table(placement: Any) -> str:
    predicted = dict(placement.predicted) or {placement.strategy: placement.predicted_step_time}
    for device, us in placement.single_device.items():
        predicted.setdefault(f"single:{device}", us)
    measured = placement.measured
    rows = [
        (
            ("→ " if label == placement.strategy else "") + label,
            format_time(us),
            format_time(measured[label]) if label in measured else "-",
        )
        for label, us in sorted(predicted.items(), key=lambda kv: kv[1])
    ]
    return _table(("candidate", "predicted step", "measured step"), rows, "candidates")


def picture_bundle(
    run: Any, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None
) -> dict[str, Any]:
    """The timeline picture of a profile, a traced run or a saved profile (a `Trace`, e.g.
    `dp.read_trace("run.json")`) as a MIME bundle (SVG text, PNG bytes) and a one-line
    `text/plain` summary; the figure is drawn once for all formats asked."""
    from devplace.views.drawing import timeline_figure

    wanted = [
        m for m in PICTURE_TYPES if (include is None or m in include) and m not in (exclude or ())
    ]
    runs = getattr(run, "runs", None)
    title = f"run_profile: median of {plural(runs, 'traced run')}" if runs else None
    if title is None and hasattr(run, "trace"):
        title = "traced run"
    trace = getattr(getattr(run, "run", run), "trace", run)  # a Profile's, a run's, a Trace
    fig = timeline_figure(trace, title=title)
    bundle: dict[str, Any] = {
        "text/plain": (
            f"{type(run).__name__}: {plural(len(trace.graph_ops), 'op')} on "
            f"{plural(len(trace.devices), 'device')}, step {format_time(trace.makespan_us)}, "
            f"{plural(trace.transfer_count, 'cross-device transfer')}"
        )
    }
    for mime in wanted:
        buffer = io.BytesIO()
        fig.savefig(buffer, format=mime.split("/")[1].split("+")[0], dpi=_DPI)
        data = buffer.getvalue()
        bundle[mime] = data.decode() if mime == "image/svg+xml" else data
    return bundle


def cluster_html(cluster: Any) -> str:
    """A `LocalCluster` as HTML: each task's address, session target, PID and cores."""
    if not cluster.pids:  # `spec` refuses a cluster not started
        return f"<p><b>LocalCluster</b> {escape(str(cluster.tasks))}: not started</p>"
    exited = cluster.exited()
    rows = []
    for job, addresses in cluster.spec.items():
        for task, address in enumerate(addresses):
            role = f"{job}/{task}"
            state = f"exited ({exited[role]})" if role in exited else "running"
            cores = ",".join(map(str, cluster.cores.get(role, []))) or "-"
            target = cluster.target(job, task)
            pid = cluster.pids.get(role, "-")
            rows.append((f"/job:{job}/task:{task}", address, target, str(pid), cores, state))
    where = "a loopback-only namespace" if cluster.isolated else "every interface (not isolated)"
    return (
        _STYLE
        + f"<p><b>LocalCluster</b>: {plural(len(rows), 'task')} listening on {where}; "
        + f"logs in {escape(str(cluster.workdir))}</p>"
        + _table(("task", "address", "target", "pid", "cores", "state"), rows)
    )


def session_html(sess: Any) -> str:
    """A devplace `Session` as HTML: its target (or in process), its devices, its graph."""
    target = sess.sess_str.decode() if isinstance(sess.sess_str, bytes) else sess.sess_str
    devices = sess.devices()
    colors = device_colors(devices)
    kind = type(sess).__name__
    ops = len(sess.graph.get_operations())
    where = escape(target) if target else "in process"
    return (
        _STYLE
        + f"<p><b>{kind}</b> {where}: {plural(len(devices), 'device')}, a graph of "
        + f"{plural(ops, 'op')}</p><p>{_legend(colors)}</p>"
    )


def mime_types(obj: Any) -> list[str]:
    """The rich MIME types devplace shows `obj` in (what Julia's `showable` asks)."""
    found = ["text/html"] if callable(getattr(obj, "_repr_html_", None)) else []
    if type(obj).__module__.startswith("devplace.") and callable(
        getattr(obj, "_repr_mimebundle_", None)
    ):
        found += PICTURE_TYPES
    return found


def mime_data(obj: Any, mime: str) -> str | bytes:
    """`obj` rendered as `mime` (HTML or SVG text, PNG bytes), for Julia's `show`; an error
    naming the types it has when it has no such rendering."""
    if mime not in mime_types(obj):
        raise ValueError(
            f"{type(obj).__name__} has no {mime!r} display; it has {mime_types(obj) or 'none'}"
        )
    if mime == "text/html":
        return str(obj._repr_html_())
    return obj._repr_mimebundle_(include=[mime])[mime]
