"""Reading traces: devices, ops, busy time, makespan, transfers; errors name the file."""

import json

import pytest
from trace_builders import hand_trace, op, process, two_device_graph

import devplace as dp
from devplace.facts.trace import TraceError, lane_kind, read_trace


def test_devices_are_the_compute_processes_in_order():
    trace = read_trace(hand_trace())
    assert trace.devices == ["/device:CPU:0", "/device:CPU:1"]
    assert {o.name for o in trace.ops} == {"a", "b", "c", "d"}  # _SOURCE is not an op


def test_busy_time_counts_overlaps_once_and_makespan_spans_all_ops():
    trace = read_trace(hand_trace())
    assert trace.busy_us() == {"/device:CPU:0": 20.0, "/device:CPU:1": 10.0}
    assert trace.makespan_us == 40.0
    assert [o.start_us for o in trace.ops_on("/device:CPU:0")] == [0.0, 5.0, 20.0]


def test_without_a_devplace_section_transfers_come_from_cross_device_flows():
    trace = read_trace(hand_trace())
    assert [(t.tensor, t.source, t.destination) for t in trace.transfers] == [
        ("c", "/device:CPU:0", "/device:CPU:1")
    ]
    assert trace.transfer_count == 1  # one tensor sent once, whatever its consumers
    assert trace.spans == [(25.0, 30.0)]  # c's end to its first reader's start (the earliest flow)
    assert trace.transfer_bytes is None
    assert not trace.exact_transfers


def test_a_devplace_section_gives_exact_transfers():
    data = hand_trace()
    data["devplace"] = {
        "transfers": [
            {
                "tensor": "c:0",
                "source": "/device:CPU:0",
                "destination": "/device:CPU:1",
                "bytes": 40,
            },
            {
                "tensor": "x/ctrl/_1:0",
                "source": "/device:CPU:0",
                "destination": "/device:CPU:1",
                "bytes": 0,
                "control": True,
            },
        ]
    }
    trace = read_trace(data)
    assert trace.exact_transfers
    assert trace.transfer_count == 2
    assert trace.transfer_bytes == 40


def test_lanes_are_ops_kernels_or_copies_and_aggregates_are_marked():
    assert lane_kind("") == ("op", False)
    assert lane_kind("stream:13") == ("kernel", False)
    assert lane_kind("stream:all") == ("kernel", True)
    assert lane_kind("memcpy") == ("copy", True)
    assert lane_kind("stream:14<MemcpyH2D>") == ("copy", False)


def test_runtime_lane_names_become_short_devices():
    data = hand_trace()
    data["traceEvents"][1]["args"]["name"] = "/job:worker/replica:0/task:1/device:cpu:1 Compute"
    assert read_trace(data).devices == [
        "/device:CPU:0",
        "/job:worker/replica:0/task:1/device:CPU:1",
    ]


def test_a_saved_profile_reads_back_with_its_devices_and_transfers(tmp_path):
    z = two_device_graph(shape=(10, 10))
    sess = dp.Session(cpus=2, optimize=False)
    prof = dp.run_profile(sess, z)
    path = dp.save_profile(tmp_path / "p.json", prof)
    report = dp.placement(sess, z)
    trace = read_trace(path)
    assert trace.devices == ["/device:CPU:0", "/device:CPU:1"]
    ran = {o.name: o.device for o in trace.ops}
    assert ran["y"] == report.actual("y") == "/device:CPU:1"
    assert ran["z"] == report.actual("z") == "/device:CPU:0"
    assert trace.transfer_count == report.transfer_count
    assert trace.transfer_bytes == report.transfer_bytes == 400
    assert [(t.tensor, t.source, t.destination) for t in trace.transfers if not t.control] == [
        ("y:0", "/device:CPU:1", "/device:CPU:0")
    ]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "content, problem",
    [
        ('{"traceEvents": [', "is not JSON"),
        ('{"events": []}', "has no 'traceEvents' list"),
        (
            json.dumps({"traceEvents": [process(1, "Allocators")]}),
            "has no '<device> Compute' processes",
        ),
        ('{"traceEvents": [3]}', "traceEvents[0] is 3, expected an object"),
        (
            json.dumps(
                {"traceEvents": [process(1, "/device:CPU:0 Compute"), op(1, "a", "soon", 1)]}
            ),
            "traceEvents[1].ts is 'soon', expected a number of µs",
        ),
        (
            json.dumps({"traceEvents": [process(1, "/device:CPU:0 Compute")], "devplace": {}}),
            "its 'devplace' section has no 'transfers' list",
        ),
        (
            json.dumps(
                {
                    "traceEvents": [process(1, "/device:CPU:0 Compute")],
                    "devplace": {"transfers": [{"tensor": "a:0"}]},
                }
            ),
            "devplace.transfers[0] is malformed",
        ),
    ],
)
def test_malformed_files_are_named_with_the_problem(tmp_path, content, problem):
    path = write(tmp_path, "bad.json", content)
    with pytest.raises(TraceError) as info:
        read_trace(path)
    message = str(info.value)
    assert str(path) in message
    assert problem in message
    assert "save_profile" in message  # the hint


def test_missing_file_and_folder_are_named(tmp_path):
    with pytest.raises(TraceError, match=r"nope\.json'?: no such file"):
        read_trace(tmp_path / "nope.json")
    with pytest.raises(TraceError, match="is a directory"):
        read_trace(tmp_path)
