"""Profile pictures: valid PNGs, one lane per device of the trace, readable labels, and
compare's numbers equal to what the traces hold."""

import json
from collections import Counter

import matplotlib.image
import numpy as np
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.text import Annotation, Text
from trace_builders import hand_trace, process
from trace_builders import op as trace_op

import devplace as dp
from devplace.views.plot import (
    TRANSFER_COLOR,
    PictureError,
    compare_profiles,
    comparison_figure,
    op_color,
    plot_profile,
    profile_figure,
)


def three_device_profile(path, colocate):
    """A small model on three logical CPUs; gradients colocated or not."""
    graph = dp.tf.Graph()
    with graph.as_default():
        with dp.cpu(1):
            w = dp.Variable(dp.tf.ones([30, 30]), name="w")
            h = dp.tanh(dp.matmul(w, w), name="h")
        with dp.cpu(2):
            y = dp.reduce_sum(dp.sin(h), name="y")
        g = dp.gradients(y, w, colocate=colocate)
        sess = dp.Session(cpus=3, optimize=False, graph=graph)
        dp.init(sess)
        prof = dp.run_profile(sess, [g, y])
    return dp.save_profile(path, prof)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    folder = tmp_path_factory.mktemp("traces")
    return (
        three_device_profile(folder / "true.json", True),
        three_device_profile(folder / "false.json", False),
    )


def raw_devices(path):
    """The devices of a trace file, read straight from its process names (a GPU's stream
    lanes, `GPU:0/stream:13`, are that GPU)."""
    events = json.loads(open(path).read())["traceEvents"]
    names = [e["args"]["name"] for e in events if e.get("name") == "process_name"]
    lanes = [n.split("/device:")[1].split(" ")[0] for n in names if n.endswith(" Compute")]
    return sorted({lane.split("/")[0] for lane in lanes})


def raw_makespan(path):
    events = json.loads(open(path).read())["traceEvents"]
    ops = [e for e in events if e.get("ph") == "X" and e["args"].get("name") != "_SOURCE"]
    return max(e["ts"] + e["dur"] for e in ops) - min(e["ts"] for e in ops)


def raw_transfers(path):
    transfers = json.loads(open(path).read())["devplace"]["transfers"]
    return len(transfers), sum(t["bytes"] for t in transfers)


def assert_png(path):
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 1000
    assert np.asarray(image).std() > 0.05  # not a blank canvas


def lanes(ax):
    return [label.get_text().split("\n")[0] for label in ax.get_yticklabels()]


def test_plot_profile_writes_a_png_with_one_lane_per_device(traces, tmp_path):
    out = tmp_path / "show.png"
    trace = plot_profile(traces[0], out)
    assert_png(out)
    assert trace.devices == [f"/device:{d}" for d in raw_devices(traces[0])]
    assert {"/device:CPU:1", "/device:CPU:2"} <= set(trace.devices)
    fig, _ = profile_figure(traces[0])
    (ax,) = [a for a in fig.axes if a.get_ylabel() == "device"]
    assert lanes(ax) == trace.devices
    assert "time" in ax.get_xlabel()
    (legend,) = fig.legends
    legend = [t.get_text() for t in legend.get_texts()]
    busiest = Counter()
    for op in trace.ops:
        busiest[op.op_type] += op.duration_us
    assert {busiest.most_common(1)[0][0], "gradient op", "cross-device transfer"} <= set(legend)


def test_op_labels_never_overlap_and_stay_inside_the_timeline(traces):
    for path in traces:
        fig, _ = profile_figure(path)
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        names = [t for t in ax.texts if t.get_text().strip()]  # not the transfer arrows
        boxes = [t.get_window_extent(renderer) for t in names]
        assert boxes, "some op is wide enough to be named"
        area = ax.get_window_extent(renderer)
        for i, box in enumerate(boxes):
            assert area.x0 <= box.x0 and box.x1 <= area.x1 + 1
            assert not any(box.overlaps(other) for other in boxes[i + 1 :])


def test_compare_numbers_equal_the_traces(traces, tmp_path):
    out = tmp_path / "compare.png"
    comparison = compare_profiles(*traces, out, labels=("colocated", "default"))
    assert_png(out)
    for summary, path in ((comparison.a, traces[0]), (comparison.b, traces[1])):
        assert summary.makespan_us == raw_makespan(path)
        assert summary.source == str(path)  # the path itself, no quotes inside the string
        assert (summary.transfer_count, summary.transfer_bytes) == raw_transfers(path)
        assert summary.devices == tuple(f"/device:{d}" for d in raw_devices(path))
        assert set(summary.busy_us) == set(summary.devices)
        # TF times ops in whole µs: a device that ran only tiny ops may be busy 0 µs
        assert all(0 <= b <= summary.makespan_us for b in summary.busy_us.values())
        assert max(summary.busy_us.values()) > 0
    table = comparison.table()
    assert table.splitlines()[0].split() == ["colocated", "default"]
    count_row = next(r for r in table.splitlines() if r.startswith("cross-device transfers"))
    assert count_row.split()[-2:] == [
        str(comparison.a.transfer_count),
        str(comparison.b.transfer_count),
    ]


def test_compare_busy_time_and_makespan_of_known_traces(tmp_path):
    late = hand_trace()
    for event in late["traceEvents"]:
        if event.get("ph") == "X" and event["args"]["name"] == "d":
            event["dur"] = 30  # CPU:1 busy 30 µs, makespan 60 µs
    fig, comparison = comparison_figure(hand_trace(), late)
    assert comparison.a.busy_us == {"/device:CPU:0": 20.0, "/device:CPU:1": 10.0}
    assert comparison.b.busy_us == {"/device:CPU:0": 20.0, "/device:CPU:1": 30.0}
    assert (comparison.a.makespan_us, comparison.b.makespan_us) == (40.0, 60.0)
    assert (comparison.a.label, comparison.b.label) == ("A", "B")
    timelines = [ax for ax in fig.axes if ax.get_ylabel() == "device"]
    assert len(timelines) == 2
    assert all(lanes(ax) == ["/device:CPU:0", "/device:CPU:1"] for ax in timelines)
    assert timelines[0].get_xlim() == timelines[1].get_xlim()  # one time scale
    assert "busy /device:CPU:1      10 µs (25%)  30 µs (50%)" in comparison.table()


def test_every_counted_transfer_is_one_arrow(traces):
    for path in traces:
        fig, trace = profile_figure(path)
        (ax,) = [a for a in fig.axes if a.get_ylabel() == "device"]
        drawn = [t for t in ax.texts if isinstance(t, Annotation)]
        assert trace.transfer_count > 0
        assert len(drawn) == trace.transfer_count
        assert f"{trace.transfer_count} transfers" in " ".join(ax.get_title().split())


def test_one_time_unit_per_picture_for_the_axis_and_the_makespan():
    # a 3 s step: the axis and the title's makespan both in s (the axis was in ms before)
    slow = {
        "traceEvents": [
            process(1, "/device:CPU:0 Compute"),
            trace_op(1, "a", 0, 1_000_000),
            trace_op(1, "b", 1_000_000, 2_000_000),
        ]
    }
    fig, trace = profile_figure(slow)
    assert trace.makespan_us == 3e6
    (ax,) = [a for a in fig.axes if a.get_ylabel() == "device"]
    assert ax.get_xlabel() == "time since the first op started (s)"
    assert "makespan 3 s" in ax.get_title()
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert "3" in ticks and "3000" not in ticks
    assert lanes(ax) == ["/device:CPU:0"]
    assert ax.get_yticklabels()[0].get_text().endswith("busy 3 s")


def test_unknown_bytes_show_as_question_marks():
    table = comparison_figure(hand_trace(), hand_trace())[1].table()
    row = next(r for r in table.splitlines() if r.startswith("transfer bytes"))
    assert row.split()[-2:] == ["?", "?"]
    assert "does not record sizes" in table


def test_writing_into_a_missing_folder_names_it(traces, tmp_path):
    with pytest.raises(PictureError, match="folder .*nowhere.* does not exist"):
        plot_profile(traces[0], tmp_path / "nowhere" / "x.png")


def test_one_op_type_has_one_colour_in_every_picture_and_transfers_another():
    assert op_color("Sin") == op_color("Sin") and op_color("Sin") != op_color("Cos")
    types = ["MatMul", "Sin", "Cos", "Mul", "AddV2", "Const", "VariableV2", "Identity", "BiasAdd"]
    assert len({op_color(t) for t in types}) == len(types)
    colours = {op_color(t) for t in [*types, "_Arg", "Softmax", "Unknown", "x" * 40]}
    assert to_hex(TRANSFER_COLOR) not in {to_hex(c) for c in colours}
    # a type's colour does not depend on what else the picture holds
    fig_a, _ = profile_figure(hand_trace())
    mixed = hand_trace()
    mixed["traceEvents"][6]["args"]["op"] = "MatMul"
    fig_b, _ = profile_figure(mixed)
    legend = [
        {
            text.get_text(): to_hex(handle.get_facecolor())
            for text, handle in zip(
                f.legends[0].get_texts(), f.legends[0].legend_handles, strict=True
            )
            if isinstance(handle, Patch)
        }
        for f in (fig_a, fig_b)
    ]
    assert legend[0]["Sin"] == legend[1]["Sin"] == to_hex(op_color("Sin"))


def test_column_size_keeps_every_label_at_least_7_pt(traces, tmp_path):
    for fig in (
        profile_figure(traces[0], size="column")[0],
        comparison_figure(*traces, size="column")[0],
    ):
        assert fig.get_figwidth() == 3.5
        sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text().strip()]
        assert sizes and min(sizes) >= 7
        drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # inches, every drawn artist
        assert drawn.x0 >= -0.01 and drawn.x1 <= 3.5 + 0.01  # nothing cut off at the sides


@pytest.mark.parametrize("extension, magic", [(".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_vector_output_by_extension(traces, tmp_path, extension, magic):
    out = tmp_path / f"p{extension}"
    plot_profile(traces[0], out, size="column")
    assert out.read_bytes().startswith(magic)


@pytest.mark.parametrize("name", ["x.xyz", "x.json", "x"])
def test_unsupported_picture_formats_are_refused_before_drawing(traces, tmp_path, name):
    with pytest.raises(
        PictureError, match=r"x.*is not a picture format; use one of .png, .svg, .pdf"
    ):
        plot_profile(traces[0], tmp_path / name)
    assert not (tmp_path / name).exists()


def test_logical_cpus_carry_the_caveat_and_counts_are_pluralised(traces):
    fig, trace = profile_figure(traces[0])
    title = fig.axes[0].get_title()
    assert "Note: logical CPU devices share one thread pool" in title
    single = {"traceEvents": [process(1, "/device:CPU:0 Compute"), trace_op(1, "a", 0, 5)]}
    fig, _ = profile_figure(single)
    title = fig.axes[0].get_title()
    assert "1 op on 1 device," in title and "0 transfers" in title and "Note" not in title


def test_a_failed_write_leaves_the_old_picture_whole(traces, tmp_path, monkeypatch):
    out = tmp_path / "keep.png"
    plot_profile(traces[0], out)
    before = out.read_bytes()

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", broken)
    with pytest.raises(OSError, match="keep.png.*No space left"):
        plot_profile(traces[1], out)
    assert out.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["keep.png"]


def test_a_dense_row_is_drawn_as_what_its_bars_show_in_few_bars():
    """A row of 20,000 overlapping ops (a few long ones among them) is drawn with at most one
    bar per 1/4000 of the time axis, and at every such point in the colour of the op drawn last
    over it, as drawing every bar in start order would show."""
    rng = np.random.default_rng(7)
    n = 20_000
    starts = np.cumsum(rng.integers(0, 20, n))
    durations = np.where(rng.random(n) < 0.002, 5_000, rng.integers(1, 50, n))
    types = rng.choice(["MatMul", "Add", "Relu", "Conv2D", "Tanh"], n)
    events = [process(1, "/job:localhost/replica:0/task:0/device:CPU:0 Compute")]
    events += [
        trace_op(1, f"op{i}", int(t), int(d), op_type=str(k))
        for i, (t, d, k) in enumerate(zip(starts, durations, types, strict=True))
    ]
    fig, trace = profile_figure({"traceEvents": events})
    bars = fig.axes[0].collections[0]  # the ops' bars (gradient ops and copies follow)
    placed, colors = bars.get_transforms(), bars.get_facecolor()
    assert 0 < len(placed) <= 4000
    left, width = placed[:, 0, 2], placed[:, 0, 0]
    xmax = trace.makespan_us
    ends = starts - starts[0] + np.maximum(durations, xmax * 0.003)  # bars are widened so
    for x in (np.arange(4000) + 0.5) * xmax * 1.02 / 4000:  # each 1/4000 of the axis
        drawn = np.flatnonzero((left <= x) & (x < left + width))
        over = np.flatnonzero((starts - starts[0] <= x) & (x < ends))
        if len(over) == 0:
            assert len(drawn) == 0, x
            continue
        assert len(drawn) == 1, x
        assert to_hex(colors[drawn[0]]) == to_hex(op_color(types[over[-1]])), x
