"""Placement reports: actual devices, transfers with bytes, and the exports."""

import csv
import io
import json

import pytest
from conftest import DEFAULT_DEVICE, GPUS
from trace_builders import two_device_graph

import devplace as dp
from devplace.facts.report import MAX_TRANSFER_ROWS, Fetch, OpNotRunError
from devplace.facts.trace import read_trace
from devplace.views.plot import profile_figure

tf = dp.tf

#: Devices other than the client's side (the session's CPU:0), in process and on a local server.
FAR = ["/device:CPU:1", *GPUS]


@pytest.fixture(scope="module")
def server():
    """A TF server in this process with two CPU devices (and the GPUs), for remote sessions."""
    return tf.train.Server.create_local_server(config=tf.ConfigProto(device_count={"CPU": 2}))


def session(server, remote):
    return (
        dp.Session(target=server.target, optimize=False)
        if remote
        else dp.Session(cpus=2, optimize=False)
    )


@pytest.mark.slow
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "remote"])
@pytest.mark.parametrize("device", FAR)
def test_a_fetch_to_the_client_is_no_transfer(server, device, remote, tmp_path):
    # In process the fetch's pair brings y from `device` to CPU:0's _Retval; remotely to the
    # master's CPU:0, whose _Send goes to the client. One rule: the fetch, from `device`.
    with dp.device(device):
        y = tf.sin(tf.constant([1.0, 2.0, 3.0], name="x"), name="y")
    with session(server, remote) as sess:
        profile = dp.run_profile(sess, y)
    report = profile.run.placement()
    assert report.actual("y").endswith(device)
    assert report.transfers == []
    assert report.fetched == [Fetch("y:0", report.actual("y"), 12)]
    line = f"fetched to the client: 1 tensor, 12 bytes, from {report.actual('y')}"
    assert report.table().splitlines()[-2:] == ["0 cross-device transfers, 0 bytes", line]
    assert json.loads(report.to_json())["fetched"] == [
        {"tensor": "y:0", "device": report.actual("y"), "bytes": 12}
    ]
    saved = read_trace(dp.save_profile(tmp_path / "fetch.json", profile))
    assert (saved.transfers, saved.fetched) == ([], report.fetched)
    fig, _ = profile_figure(saved)
    assert line in " ".join(fig.axes[0].get_title().split())


@pytest.mark.slow
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "remote"])
@pytest.mark.parametrize("device", FAR)
def test_a_fetched_tensor_another_device_reads_is_one_transfer(server, device, remote):
    with dp.device(device):
        y = tf.sin(tf.constant([1.0, 2.0], name="x"), name="y")
    with dp.cpu(0):
        z = tf.cos(y, name="z")
    with session(server, remote) as sess:
        report = dp.placement(sess, [y, z])
    far, near = report.actual("y"), report.actual("z")
    assert [(t.tensor, t.source, t.destination, t.consumers) for t in report.transfers] == [
        ("y:0", far, near, ("z",))
    ]
    # y crossed for z anyway: both fetches leave from the client's device
    assert report.fetched == [Fetch("y:0", near, 8), Fetch("z:0", near, 8)]
    assert "fetched to the client: 2 tensors, 16 bytes, from " + near in report.table()


def test_actual_devices_and_transfer_bytes():
    z = two_device_graph()
    report = dp.placement(dp.Session(cpus=2, optimize=False), z)
    assert report.actual("y") == "/device:CPU:1"
    assert report.actual("z") == "/device:CPU:0"
    data = [t for t in report.transfers if not t.control]
    assert len(data) == 1
    (transfer,) = data
    assert (transfer.tensor, transfer.source, transfer.destination) == (
        "y:0",
        "/device:CPU:1",
        "/device:CPU:0",
    )
    assert transfer.bytes == 100 * 25 * 4
    assert report.transfer_bytes == 10_000
    assert report.devices == ["/device:CPU:0", "/device:CPU:1"]


def test_one_device_has_no_transfers():
    z = two_device_graph()
    # no CPU:1 and no GPU: soft placement puts everything on CPU:0
    report = dp.placement(dp.Session(soft=True, gpus=0, optimize=False), z)
    assert report.devices == ["/device:CPU:0"]
    assert report.transfer_count == 0
    assert {op.name for op in report.moved} >= {"x", "y"}


def test_table_json_and_csv_agree():
    z = two_device_graph()
    report = dp.placement(dp.Session(cpus=2, optimize=False), z)
    table = report.table()
    assert table.splitlines()[0].split() == [
        "op",
        "type",
        "requested",
        "actual",
        "transfers",
        "out",
    ]
    assert "1 cross-device transfer, 10000 bytes" in table
    assert str(report) == table
    data = json.loads(report.to_json())
    assert data["transfer_bytes"] == 10_000
    assert {op["name"]: op["actual"] for op in data["ops"]}["y"] == "/device:CPU:1"
    rows = list(csv.DictReader(io.StringIO(report.to_csv())))
    y_row = next(r for r in rows if r["op"] == "y")
    assert (y_row["actual"], y_row["transfers_out"], y_row["bytes_out"]) == (
        "/device:CPU:1",
        "1",
        "10000",
    )


def test_the_text_report_lists_each_tensor_that_crossed():
    z = two_device_graph()
    report = dp.placement(dp.Session(cpus=2, optimize=False), z)
    lines = report.table().splitlines()
    summary = lines.index("1 cross-device transfer, 10000 bytes")
    assert lines[summary + 1].split() == ["tensor", "from", "to", "bytes", "read", "by"]
    assert lines[summary + 3].split() == [
        "y:0",
        "/device:CPU:1",
        "/device:CPU:0",
        "9.8",
        "KiB",
        "z",
    ]


def test_the_text_reports_list_of_crossings_is_capped_with_how_many_more():
    with dp.cpu(1):
        parts = [tf.sin(tf.constant(float(i)), name=f"s{i}") for i in range(MAX_TRANSFER_ROWS + 3)]
    with dp.cpu(0):
        total = tf.add_n(parts, name="total")
    report = dp.placement(dp.Session(cpus=2, optimize=False), total)
    assert report.transfer_count == MAX_TRANSFER_ROWS + 3
    lines = report.table().splitlines()
    listed = [line.split()[0] for line in lines if line.startswith("s") and ":0 " in line]
    assert len(listed) == MAX_TRANSFER_ROWS
    assert {t.tensor for t in report.transfers} >= set(listed)
    assert "... and 3 more transfers (to_json() lists every one)" in lines
    assert "... and 1 more transfer " in report.transfers_table(limit=MAX_TRANSFER_ROWS + 2)


def test_exports_write_files(tmp_path):
    z = two_device_graph()
    report = dp.placement(dp.Session(cpus=2, optimize=False), z)
    report.to_json(tmp_path / "p.json")
    report.to_csv(tmp_path / "p.csv")
    assert json.loads((tmp_path / "p.json").read_text())["transfer_count"] == report.transfer_count
    assert (tmp_path / "p.csv").read_text().startswith("op,type,requested,actual")


def test_unknown_op_lookup_lists_what_ran():
    z = two_device_graph()
    report = dp.placement(dp.Session(cpus=2), z)
    with pytest.raises(OpNotRunError, match=r"no op named 'nope' ran .*; ops that ran: .*z"):
        report["nope"]


def test_an_op_grappler_folded_away_says_so_and_what_to_do():
    x = dp.constant(2.0, name="x")
    y = dp.sin(x, name="y")  # constant-folded by Grappler
    z = dp.identity(y, name="z")
    report = dp.placement(dp.Session(), z)
    assert "y" in report.optimized_away
    with pytest.raises(OpNotRunError, match="'y' did not run: .*folded or pruned.*optimize=False"):
        report.actual("y")
    with pytest.raises(dp.Error):
        report.actual("y")
    assert dp.placement(dp.Session(optimize=False), z).actual("y") == DEFAULT_DEVICE
