"""Profile pictures: a per-device Gantt chart of one trace, and two traces compared.

Each device is one row. Inside it, the device's threads are sub-rows of op bars; a GPU also
gets a sub-row for its kernels (all kernel streams) and one for its memory copies, and a task of
a remote session one for the tensors it received from other tasks (RPC), labelled on the
right. Every op type has one fixed colour in every picture (a table for common types, a
stable hash for the rest); copies and cross-device transfers are drawn in a red no op type
uses. Ops TensorFlow made for gradients (names under `gradients/`) are hatched; a cross-device
transfer is an arrow from the end of the producing op to the start of the op that consumed it
on the other device. Bars narrower than a few pixels are widened to stay visible, and a row of
more than 4000 bars is drawn as what its bars show at 4000 points across the time axis (one bar
per run of one colour: the picture of 100k sub-pixel bars at a tenth of the cost); the numbers
(busy time, makespan) always come from the real durations.

`size` picks the figure's width: `"screen"` (13 in), `"page"` (7 in) or `"column"` (3.5 in, a
paper column; every label at least 7 pt). The format follows the extension: PNG, or the vector
formats SVG and PDF.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any

from matplotlib.figure import Figure

from devplace.core._gc import cycle_collector_paused
from devplace.core.atomic import folder_problem, replace_file
from devplace.facts.comparison import Comparison, compare
from devplace.facts.trace import Trace, read_trace
from devplace.views.drawing import (
    SIZES,
    TRANSFER_COLOR,
    PictureError,
    comparison_timelines,
    op_color,
    timeline_figure,
)

__all__ = [
    "FORMATS",
    "SIZES",
    "TRANSFER_COLOR",
    "PictureError",
    "compare_profiles",
    "comparison_figure",
    "op_color",
    "plot_profile",
    "profile_figure",
]

#: Picture formats by extension.
FORMATS = (".png", ".svg", ".pdf")
_LARGE_EVENTS = 50_000  # traces this large get a progress bar on a terminal


def _check_out(out: str | os.PathLike[str]) -> tuple[str, str]:
    """(path, format) of a picture to write; refused before any drawing when unusable."""
    path = os.fspath(out)
    extension = os.path.splitext(path)[1].lower()
    allowed = ", ".join(FORMATS)
    if extension not in FORMATS:
        raise PictureError(
            f"cannot write picture {path!r}: {extension or 'no extension'} is not a picture "
            f"format; use one of {allowed}"
        )
    problem = folder_problem(path)
    if problem:
        raise PictureError(f"cannot write picture {path!r}: {problem} (formats: {allowed})")
    folder = os.path.dirname(path) or "."
    if not os.access(folder, os.W_OK):
        raise PictureError(
            f"cannot write picture {path!r}: folder {folder!r} is not writable (choose another "
            f"folder; formats: {allowed})"
        )
    return path, extension[1:]


def profile_figure(
    trace_or_path: Any, title: str | None = None, size: str = "screen"
) -> tuple[Figure, Trace]:
    """The Gantt chart of a trace as a matplotlib `Figure` (for notebooks), with the `Trace`."""
    trace = read_trace(trace_or_path)
    return timeline_figure(trace, title, size), trace


def _is_large(source: Any) -> bool:
    """A trace that takes seconds to read and draw (50k events or more, about 7 MB)."""
    if isinstance(source, Trace):
        return len(source.ops) + len(source.kernels) >= _LARGE_EVENTS
    if isinstance(source, dict):
        return len(source.get("traceEvents") or ()) >= _LARGE_EVENTS
    try:
        return os.path.getsize(source) >= _LARGE_EVENTS * 140  # bytes an event takes, about
    except (OSError, TypeError, ValueError):
        return False


@contextlib.contextmanager
def _steps(sources: Sequence[Any], progress: bool | None) -> Iterator[Any]:
    """A progress bar over reading each trace, drawing and writing: shown on a terminal for
    large traces (`progress=None`), always (`True`) or never (`False`)."""
    from tqdm.auto import tqdm

    if progress is None:
        hidden = None if any(_is_large(s) for s in sources) else True  # None: on a terminal
    else:
        hidden = not progress
    with tqdm(
        total=len(sources) + 2, desc="reading", unit="step", leave=False, disable=hidden
    ) as bar:

        def step(next_desc: str) -> None:
            bar.update()
            bar.set_description_str(next_desc)

        yield step


def plot_profile(
    trace_or_path: Any,
    out: str | os.PathLike[str],
    title: str | None = None,
    size: str = "screen",
    progress: bool | None = None,
) -> Trace:
    """Draw a trace (a path, `Profile.trace`, or `Trace`) as a per-device Gantt chart to `out`
    (PNG, SVG or PDF by extension; written atomically). Returns the parsed `Trace`. A progress
    bar shows for large traces on a terminal (`progress=None`), always (`True`) or never."""
    path, fmt = _check_out(out)
    with _steps([trace_or_path], progress) as step, cycle_collector_paused():
        trace = read_trace(trace_or_path)
        step("drawing")
        fig, _ = profile_figure(trace, title, size)
        step(f"writing {path}")
        _save(fig, path, fmt)
        step("done")
    return trace


def comparison_figure(
    a: Any,
    b: Any,
    labels: tuple[str, str] | None = None,
    title: str | None = None,
    size: str = "screen",
) -> tuple[Figure, Comparison]:
    """The picture of `compare_profiles` as a matplotlib `Figure`, with its numbers."""
    ta, tb = read_trace(a), read_trace(b)
    comparison = compare(ta, tb, labels)
    return comparison_timelines(ta, tb, comparison, title, size), comparison


def compare_profiles(
    a: Any,
    b: Any,
    out: str | os.PathLike[str],
    labels: tuple[str, str] | None = None,
    title: str | None = None,
    size: str = "screen",
    progress: bool | None = None,
) -> Comparison:
    """Draw two traces one above the other on the same rows and time scale, with per-device
    busy time and a summary table, to `out` (PNG, SVG or PDF; written atomically); returns the
    numbers as a `Comparison`. A progress bar shows as for `plot_profile`."""
    path, fmt = _check_out(out)
    with _steps([a, b], progress) as step, cycle_collector_paused():
        ta = read_trace(a)
        step("reading")
        tb = read_trace(b)
        step("drawing")
        fig, comparison = comparison_figure(ta, tb, labels, title, size)
        step(f"writing {path}")
        _save(fig, path, fmt)
        step("done")
    return comparison


def _save(fig: Figure, path: str, fmt: str) -> str:
    with replace_file(path, "wb") as f:
        fig.savefig(f, format=fmt, dpi=300 if fmt == "png" and fig.get_figwidth() < 5 else 120)
    return path
