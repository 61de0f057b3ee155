"""Profile pictures: valid PNGs, one lane per device of the trace, readable labels, and
compare's numbers equal to what the traces hold."""

import json
from collections import Counter

import matplotlib.image
import numpy as np
import pytest
from trace_builders import hand_trace

import devplace as dp
from devplace.plot import compare_profiles, comparison_figure, plot_profile, profile_figure


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
    """The devices of a trace file, read straight from its process names."""
    events = json.loads(open(path).read())["traceEvents"]
    names = [e["args"]["name"] for e in events if e.get("name") == "process_name"]
    return sorted(n.split("/device:")[1].split(" ")[0] for n in names if n.endswith(" Compute"))


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
    assert trace.devices == ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
    assert [d.rsplit("/", 1)[1] for d in trace.devices] == [
        "device:" + d for d in raw_devices(traces[0])
    ]
    fig, _ = profile_figure(traces[0])
    (ax,) = [a for a in fig.axes if a.get_legend()]
    assert lanes(ax) == trace.devices
    assert "time" in ax.get_xlabel() and ax.get_ylabel() == "device"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
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
        assert (summary.transfer_count, summary.transfer_bytes) == raw_transfers(path)
        assert summary.devices == tuple(f"/device:{d}" for d in raw_devices(path))
        assert set(summary.busy_us) == set(summary.devices)
        assert all(0 < b <= summary.makespan_us for b in summary.busy_us.values())
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


def test_unknown_bytes_show_as_question_marks():
    table = comparison_figure(hand_trace(), hand_trace())[1].table()
    row = next(r for r in table.splitlines() if r.startswith("transfer bytes"))
    assert row.split()[-2:] == ["?", "?"]
    assert "does not record sizes" in table


def test_writing_into_a_missing_folder_names_it(traces, tmp_path):
    with pytest.raises(FileNotFoundError, match="folder .*nowhere.* does not exist"):
        plot_profile(traces[0], tmp_path / "nowhere" / "x.png")
