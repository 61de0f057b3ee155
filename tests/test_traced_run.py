"""One traced run, many views; GPU lanes folded into devices (real H100 traces as fixtures).

tests/fixtures/seed-colocate-{true,false}.json are `dp.save_profile` traces of the seeds' colocate
experiment on one H100 (../shared/gpu-measurements/). Numbers below were read from the raw JSON
(events per `"<lane> Compute"` process, `_SOURCE` left out, busy = union of [ts, ts + dur]):

true.json:  CPU:0 lane 11 ops, busy 174 µs; GPU:0 lane 5 ops, busy 118,958 µs (the first run
            carries GPU set-up: Sin alone 81,099 µs); stream:13 4 kernels busy 4 µs (stream:all
            repeats them); stream:14<MemcpyH2D> 3 copies (0 µs) and stream:15<MemcpyD2H> 2
            copies (1 µs each), busy 2 µs (memcpy repeats all 5); makespan 120,277 µs;
            devplace section 6 transfers, 20 bytes.
false.json: CPU:0 4 ops busy 56 µs; GPU:0 10 ops busy 241,274 µs; 8 kernels busy 8 µs; 2 H2D +
            2 D2H copies busy 2 µs; makespan 241,560 µs; 4 transfers, 16 bytes.
"""

import json
from pathlib import Path

import pytest
from conftest import DEFAULT_DEVICE, GPUS, HAS_GPU, requires_gpu
from trace_builders import two_device_graph

import devplace as dp
from devplace.cli import main
from devplace.facts.comparison import compare
from devplace.facts.trace import read_trace
from devplace.facts.traced import TracedRun
from devplace.views.plot import profile_figure

FIXTURES = Path(__file__).parent / "fixtures"
CPU0, GPU0 = "/device:CPU:0", "/device:GPU:0"

H100 = {
    "seed-colocate-true.json": {
        "ops": {CPU0: 9, GPU0: 4},  # the graph's 13, without the runtime's 3
        "busy": {CPU0: 174.0, GPU0: 118_958.0},
        "kernels": (4, 4.0),
        "copies": ({"H2D": 3, "D2H": 2}, 2.0),
        "makespan": 120_277.0,
        "transfers": (6, 20),
    },
    "seed-colocate-false.json": {
        "ops": {CPU0: 3, GPU0: 10},  # the graph's 13, without the runtime's _Retval
        "busy": {CPU0: 56.0, GPU0: 241_274.0},
        "kernels": (8, 8.0),
        "copies": ({"H2D": 2, "D2H": 2}, 2.0),
        "makespan": 241_560.0,
        "transfers": (4, 16),
    },
}


@pytest.mark.parametrize("name", sorted(H100))
def test_h100_traces_are_two_devices_with_their_ops_kernels_and_copies(name):
    want = H100[name]
    trace = read_trace(FIXTURES / name)
    assert trace.devices == [CPU0, GPU0]
    assert trace.op_counts() == want["ops"]
    assert len(trace.graph_ops) == sum(want["ops"].values()) == 13
    assert trace.busy_us() == want["busy"]
    kernels, kernel_busy = want["kernels"]
    assert len(trace.kernels) == kernels and {k.lane for k in trace.kernels} == {"stream:13"}
    assert trace.busy_us("kernel") == {GPU0: kernel_busy}
    directions, copy_busy = want["copies"]
    assert {d: sum(c.direction == d for c in trace.copies) for d in directions} == directions
    assert len(trace.copies) == sum(directions.values())
    assert trace.busy_us("copy") == {GPU0: copy_busy}
    assert trace.makespan_us == want["makespan"]
    assert (trace.transfer_count, trace.transfer_bytes) == want["transfers"]


def test_h100_comparison_has_one_busy_row_per_device():
    comparison = compare(
        FIXTURES / "seed-colocate-true.json", FIXTURES / "seed-colocate-false.json"
    )
    busy_rows = [r[0] for r in comparison.rows() if r[0].startswith("busy ")]
    assert busy_rows == [f"busy {CPU0}", f"busy {GPU0}"]
    table = comparison.table()
    assert "13" in next(r for r in table.splitlines() if r.startswith("ops"))
    assert "stream" not in "\n".join(r for r in table.splitlines() if r.startswith("busy"))
    assert (comparison.a.op_count, comparison.b.op_count) == (13, 13)  # the graph's ops


def test_aggregate_lanes_count_when_no_stream_lane_exists():
    data = json.loads((FIXTURES / "seed-colocate-true.json").read_text())
    dropped = {
        e["pid"]
        for e in data["traceEvents"]
        if e.get("ph") == "M"
        and ("stream:13" in e["args"]["name"] or "<Memcpy" in e["args"]["name"])
    }
    data["traceEvents"] = [e for e in data["traceEvents"] if e.get("pid") not in dropped]
    trace = read_trace(data)
    assert len(trace.kernels) == 4 and {k.lane for k in trace.kernels} == {"stream:all"}
    assert len(trace.copies) == 5 and {c.lane for c in trace.copies} == {"memcpy"}
    assert trace.busy_us("copy") == {GPU0: 2.0}


OTHER = GPUS[0] if HAS_GPU else "/device:CPU:1"  # the device y runs on


def test_every_view_of_one_traced_run_agrees():
    z = two_device_graph(OTHER, (50, 20))
    sess = dp.Session(cpus=2, optimize=False)
    run = TracedRun.of(sess, z)
    report = run.placement()
    assert "trace" not in vars(run), "a placement report needs the partition graphs alone"
    assert report.actual("y") == OTHER and report.actual("z") == CPU0
    assert report.transfers is run.transfers
    (data,) = [t for t in run.transfers if not t.control]
    assert (data.tensor, data.source, data.destination, data.bytes) == ("y:0", OTHER, CPU0, 4000)
    assert data.consumers == ("z",)  # the op on CPU:0 that read it
    stats = run.op_stats()
    assert (stats["y"].device, stats["y"].op_type, stats["y"].output_bytes) == (OTHER, "Sin", 4000)
    trace = run.trace
    assert trace.devices == sorted([CPU0, OTHER])
    assert {op.name: op.device for op in trace.ops}["y"] == OTHER
    assert set(stats.values()) <= set(trace.ops)  # the statistics are the trace's ops
    assert trace.transfers is run.transfers
    assert trace.makespan_us == run.step_time_us
    # y leaves CPU:1 when it ends and arrives when z starts
    assert trace.spans[trace.transfers.index(data)] == (stats["y"].end_us, stats["z"].start_us)
    # the saved trace reads back to the same facts
    again = read_trace(json.loads(json.dumps(run.chrome_trace())))
    assert (again.devices, again.ops, again.transfers) == (
        trace.devices,
        trace.ops,
        trace.transfers,
    )
    assert (again.spans, again.makespan_us, again.exact_transfers) == (
        trace.spans,
        trace.makespan_us,
        True,
    )
    assert run.values == pytest.approx(1000 * 0.8414709848)


def test_the_chrome_trace_names_threads_and_has_no_empty_processes():
    z = two_device_graph(OTHER, (50, 20))
    events = TracedRun.of(dp.Session(cpus=2, optimize=False), z).chrome_trace()["traceEvents"]
    processes = {e["pid"] for e in events if e.get("name") == "process_name"}
    busy = {e["pid"] for e in events if e.get("ph") != "M"}
    assert processes == busy  # no process without events (TF's empty "Tensors" ones)
    threads = {
        (e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"
    }
    assert set(threads) == {(e["pid"], e["tid"]) for e in events if e.get("ph") != "M"}
    assert any(name.startswith("ops, thread") for name in threads.values())


@requires_gpu
def test_a_real_gpu_run_is_one_device_with_kernels():
    z = two_device_graph(OTHER, (50, 20))
    run = TracedRun.of(dp.Session(optimize=False), z)
    trace = run.trace
    assert trace.devices == [CPU0, GPUS[0]]
    threads = [
        e["args"]["name"] for e in run.chrome_trace()["traceEvents"] if e["name"] == "thread_name"
    ]
    assert any(name.startswith("kernels (stream:") for name in threads)
    assert not any("copys" in name for name in threads)
    assert trace.kernels and {k.device for k in trace.kernels} == {GPUS[0]}
    assert "y" in {k.name for k in trace.kernels}
    assert DEFAULT_DEVICE == GPUS[0]


def test_h100_picture_and_command_show_two_device_rows_with_their_numbers(tmp_path, capsys):
    path = FIXTURES / "seed-colocate-true.json"
    fig, _ = profile_figure(path)
    (ax,) = [a for a in fig.axes if a.get_ylabel() == "device"]
    rows = [label.get_text().split("\n") for label in ax.get_yticklabels()]
    assert rows == [
        [CPU0, "9 ops (6 grad.)", "busy 174 µs"],
        [GPU0, "4 ops (2 grad.)", "busy 119 ms"],
    ]
    (right,) = ax.child_axes  # the labels of a GPU's sub-rows, on the right
    side = [t.get_text() for t in right.get_yticklabels()]
    assert side == ["ops", "4 kernels, 4 µs", "2 D2H, 3 H2D copies, 2 µs"]
    assert main(["profile", "show", str(path), "-o", str(tmp_path / "h100.png")]) == 0
    text = capsys.readouterr().out
    assert "13 ops on 2 devices, makespan 120 ms" in text
    assert f"{CPU0}: 9 ops, busy 174 µs\n" in text
    assert f"{GPU0}: 4 ops, busy 119 ms; 4 kernels, busy 4 µs; 5 memory copies, busy 2 µs" in text
    assert "Note" not in text  # a real GPU: no logical-CPU caveat
