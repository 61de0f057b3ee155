"""Rich display in Jupyter: the HTML tables and pictures devplace's objects show there."""

import io
import xml.etree.ElementTree as ET
from html import escape
from html.parser import HTMLParser

import pytest
from conftest import GPUS
from PIL import Image

import devplace as dp
from devplace.cluster import LocalCluster
from devplace.core.formatting import fetched_line, format_time
from devplace.facts.comparison import compare
from devplace.views.notebook import MAX_ROWS, mime_data, mime_types


class Tables(HTMLParser):
    """Every table of an HTML text as lists of rows of cell texts (header rows included)."""

    def __init__(self, text):
        super().__init__()
        self.tables, self._cell = [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


#: Where the seeds' GPU pin goes: GPU:0 when there is one, else the second logical CPU.
PINNED = GPUS[0] if GPUS else "/device:CPU:1"


def seed_graph():
    """The seeds' graph with the GPU pin on a second device (`PINNED`)."""
    pinned = PINNED
    with dp.device(dp.assign_to_device(pinned)):
        a = dp.Variable(1.0)
        b = dp.sin(a)
    with dp.cpu(0):
        c = dp.cos(b)
    return dp.gradients(c, a, colocate=True) + c


@pytest.fixture
def session():
    with dp.Session(cpus=2, soft=True, optimize=False) as sess:
        yield sess


def test_placement_html_names_the_device_each_op_ran_on(session):
    fetch = seed_graph()
    with dp.device("/device:GPU:7"):  # no such GPU: soft placement moves it (marked *)
        moved = dp.identity(fetch, name="moved")
    dp.init(session)
    report = dp.placement(session, moved)
    ops, transfers = Tables(report._repr_html_()).tables
    assert ops[0] == ["op", "type", "requested", "actual", "transfers out"]
    shown = {row[0]: row for row in ops[1:]}
    assert set(shown) == {op.name for op in report.ops}
    for op in report.ops:
        assert shown[op.name][3] == op.actual + (" *" if op.moved else "")
    assert shown["moved"][3].endswith(" *") and shown["moved"][2] == "/device:GPU:7"
    assert {row[1] for row in transfers[1:]} | {row[2] for row in transfers[1:]} <= set(
        report.devices
    )
    assert len(transfers) - 1 == report.transfer_count > 0
    assert f"{report.transfer_count} cross-device transfers" in report._repr_html_()
    assert escape(fetched_line(report.fetched)) in report._repr_html_()


def test_placement_html_shortens_long_tables_and_says_how(session):
    x = dp.constant(1.0)
    for _ in range(MAX_ROWS + 5):
        x = dp.identity(x)
    report = dp.placement(session, x)
    (ops,) = Tables(report._repr_html_()).tables
    assert len(ops) == 1 + MAX_ROWS + 1
    assert ops[-1] == [f"… {len(report.ops) - MAX_ROWS} more rows"]
    assert str(report) == report.table()  # the terminal's text is unchanged


def test_profile_shows_its_timeline_as_png_and_svg(session):
    fetch = seed_graph()
    dp.init(session)
    profile = dp.run_profile(session, fetch, repeat=2)
    bundle = profile._repr_mimebundle_()
    picture = Image.open(io.BytesIO(bundle["image/png"]))
    assert picture.width > 500 and picture.height > 100
    assert ET.fromstring(bundle["image/svg+xml"]).tag.endswith("svg")
    devices = len(profile.run.trace.devices)
    assert f"on {devices} devices" in bundle["text/plain"]
    only_png = profile.run._repr_mimebundle_(include=["image/png"])
    assert set(only_png) == {"text/plain", "image/png"}
    assert Image.open(io.BytesIO(only_png["image/png"])).format == "PNG"


def test_saved_profile_shows_its_timeline(session, tmp_path):
    fetch = seed_graph()
    dp.init(session)
    path = dp.run_profile(session, fetch).save(tmp_path / "run.json")
    trace = dp.read_trace(path)
    assert mime_types(trace) == ["image/svg+xml", "image/png"]
    bundle = trace._repr_mimebundle_()
    assert Image.open(io.BytesIO(bundle["image/png"])).width > 500
    assert "run.json" in bundle["image/svg+xml"]  # titled by its file
    assert bundle["text/plain"].startswith(f"Trace: {len(trace.graph_ops)} ops on 2 devices")


def test_comparison_html_has_the_rows_of_its_table(session, tmp_path):
    fetch = seed_graph()
    dp.init(session)
    first = dp.run_profile(session, fetch).save(tmp_path / "a.json")
    with dp.cpu(0):  # the second: one op on one device, no transfers
        alone = dp.sin(dp.constant(2.0))
    second = dp.run_profile(session, alone).save(tmp_path / "b.json")
    comparison = compare(first, second, labels=("first", "second"))
    (table,) = Tables(comparison._repr_html_()).tables
    assert table[0] == ["", "first", "second"]
    assert [tuple(row) for row in table[1:]] == comparison.rows()
    shown = {row[0]: row[1:] for row in table[1:]}
    assert shown["ops"] == [str(len(dp.read_trace(path).graph_ops)) for path in (first, second)]
    assert shown["cross-device transfers"][1] == "0" != shown["cross-device transfers"][0]
    assert shown[f"busy {PINNED}"][1] == "-"  # the second run left the pinned device idle


def test_autoplacement_html_shows_the_pick_and_the_candidates(session):
    fetch = seed_graph()
    devices = session.devices()
    placement = dp.autoplace(fetch, devices)
    html = placement._repr_html_()
    (candidates,) = Tables(html).tables
    labels = [row[0] for row in candidates[1:]]
    assert f"→ {placement.strategy}" in labels
    assert {f"single:{d}" for d in placement.single_device} <= set(labels)
    for device in set(placement.devices.values()):
        count = sum(d == device for d in placement.devices.values())
        assert f"{device}</span>: {count} op" in html
    # one step time, one format: the heading, the candidates and the explanation agree
    step = format_time(placement.predicted_step_time)
    assert f"predicted step {escape(step)}" in html.split("<table")[0]
    assert [row[1] for row in candidates[1:] if row[0].startswith("→")] == [step]
    assert f"{placement.strategy}: predicted step {escape(step)};" in html.split("<pre>")[1]


def test_session_html_lists_its_devices(session):
    html = session._repr_html_()
    assert "in process" in html
    for device in session.devices():
        assert device in html


@pytest.mark.slow
def test_local_cluster_html_lists_tasks_and_addresses():
    cluster = LocalCluster(ps=1, workers=1, start_timeout=120)
    assert "not started" in cluster._repr_html_()
    with cluster:
        (table,) = Tables(cluster._repr_html_()).tables
        rows = {row[0]: row for row in table[1:]}
        for job, task in (("ps", 0), ("worker", 0)):
            row = rows[f"/job:{job}/task:{task}"]
            assert row[1:4] == [
                cluster.address(job, task),
                cluster.target(job, task),
                str(cluster.pid(job, task)),
            ]
            assert row[5] == "running"


def test_mime_types_and_data_for_julia(session):
    report = dp.placement(session, dp.constant(2.0) * 3)
    assert mime_types(report) == ["text/html"]
    assert mime_data(report, "text/html") == report._repr_html_()
    with pytest.raises(ValueError, match="PlacementReport has no 'image/png' display"):
        mime_data(report, "image/png")
    profile = dp.run_profile(session, dp.constant(2.0) * 3)
    assert mime_data(profile, "image/png").startswith(b"\x89PNG")
    assert mime_types(dp.constant(1.0)) == []
