"""dp.tensorboard: a real TensorBoard serves the graph (actual and requested devices) and the
traced run's RunMetadata that devplace wrote, read back over HTTP from loopback."""

import io
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from conftest import GPUS
from google.protobuf import text_format
from PIL import Image

import devplace as dp
from devplace.devices import short_device
from devplace.errors import ArgumentValueError
from devplace.tensorboard_log import REQUESTED_DEVICE_ATTR

pytest.importorskip("tensorboard", reason="TensorBoard is the optional extra devplace[tensorboard]")

START_TIMEOUT_S = 90


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as reply:
        return reply.read().decode()


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The seeds' graph (GPU pin on GPU:0, else on a second CPU device) written by
    dp.tensorboard, with the fetch's ops requested devices."""
    logdir = tmp_path_factory.mktemp("board")
    graph = dp.tf.Graph()
    with graph.as_default():
        pinned = GPUS[0] if GPUS else "/device:CPU:1"
        with dp.device(dp.assign_to_device(pinned)):
            a = dp.Variable(1.0)
            b = dp.sin(a)
        with dp.cpu(0):
            c = dp.cos(b)
        fetch = dp.gradients(c, a, colocate=True) + c
        with dp.Session(cpus=2, soft=True, optimize=False, graph=graph) as sess:
            dp.init(sess)
            log = dp.tensorboard(sess, fetch, logdir, tag="colocated")
    return log, graph


@pytest.fixture(scope="module")
def board(written):
    """A real `tensorboard` on 127.0.0.1 serving the log; its URL once it lists the tag."""
    log, _ = written
    port = free_port()
    out = open(f"{log.logdir}/../tensorboard.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", log.logdir]
        + ["--host", "127.0.0.1", "--port", str(port), "--load_fast=false"],
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if log.tag in get(f"{url}/data/plugin/graphs/info", timeout=5):
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            assert proc.poll() is None, f"tensorboard exited: {open(out.name).read()[-2000:]}"
            assert time.monotonic() < deadline, f"tensorboard not serving after {START_TIMEOUT_S} s"
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        out.close()


def test_graph_served_has_each_ops_actual_and_requested_device(written, board):
    log, graph = written
    served = text_format.Parse(
        get(f"{board}/data/plugin/graphs/graph?run=.&conversions=false"), dp.tf.GraphDef()
    )
    nodes = {node.name: node for node in served.node}
    assert set(nodes) == {op.name for op in graph.get_operations()}
    for op in log.placement.ops:
        assert nodes[op.name].device == op.actual
        assert nodes[op.name].attr[REQUESTED_DEVICE_ATTR].s.decode() == op.requested
    assert len({nodes[op.name].device for op in log.placement.ops}) == 2  # the pin is real


def test_run_metadata_served_is_the_traced_runs(written, board):
    log, _ = written
    info = get(f"{board}/data/plugin/graphs/info")
    assert f'"{log.tag}"' in info and '"profile": true' in info
    served = text_format.Parse(
        get(f"{board}/data/plugin/graphs/run_metadata?run=.&tag={log.tag}"), dp.tf.RunMetadata()
    )
    assert served == log.run.run_metadata
    durations = {
        (short_device(dev.device), node.node_name): node.all_end_rel_micros
        for dev in served.step_stats.dev_stats
        for node in dev.node_stats
    }
    stats = log.run.op_stats()
    for op in log.placement.ops:  # every op devplace reports ran, timed where it ran
        assert durations[(op.actual, op.name)] == pytest.approx(stats[op.name].duration_us)


def test_each_call_writes_its_own_event_file(written, tmp_path):
    log, graph = written
    with graph.as_default(), dp.Session(cpus=2, soft=True, optimize=False, graph=graph) as sess:
        fetch = graph.get_tensor_by_name("add:0")
        dp.init(sess)
        first = dp.tensorboard(sess, fetch, tmp_path)
        second = dp.tensorboard(sess, fetch, tmp_path, tag="again")
    assert first.events_file != second.events_file
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.rsplit("/", 1)[1] for p in (first.events_file, second.events_file)
    )
    assert "tensorboard --logdir" in str(second)


def test_bad_logdir_and_tag_are_named(written, tmp_path):
    _, graph = written
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    with graph.as_default(), dp.Session(graph=graph, cpus=2, soft=True) as sess:
        with pytest.raises(ArgumentValueError, match="logdir"):
            dp.tensorboard(sess, "add:0", not_a_folder)
        with pytest.raises(ArgumentValueError, match="tag"):
            dp.tensorboard(sess, "add:0", tmp_path, tag="")


CHROMIUM = next(
    (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
    None,
)


@pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium (chromium) on PATH")
def test_graphs_dashboard_renders_in_headless_chromium(board, tmp_path):
    shot = tmp_path / "graphs.png"
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
        + ["--window-size=1400,900", "--virtual-time-budget=20000", f"--screenshot={shot}"]
        + [f"{board}/#graphs&run=."],
        check=True,
        capture_output=True,
        timeout=120,
    )
    picture = Image.open(io.BytesIO(shot.read_bytes())).convert("RGB")
    assert picture.size == (1400, 900)
    assert len(picture.getcolors(maxcolors=1 << 20)) > 50  # it drew, not a blank page
