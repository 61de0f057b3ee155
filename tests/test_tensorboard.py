"""dp.tensorboard: a real TensorBoard serves the graph (actual and requested devices) and the
traced run's RunMetadata that devplace wrote, read back over HTTP from loopback."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from google.protobuf import text_format
from headless_chromium import CHROMIUM, Chromium
from test_rich_display import seed_graph

import devplace as dp
from devplace.adapter.devices import short_device
from devplace.cli import main
from devplace.core.errors import ArgumentValueError
from devplace.facts.trace import read_trace
from devplace.views.tensorboard_log import NOT_RUN_ATTR, REQUESTED_DEVICE_ATTR, profile_graph

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
    dp.tensorboard into run `live`, and a saved profile of it by `devplace tensorboard` into
    run `saved`; returns the live log, the graph and the saved trace."""
    root = tmp_path_factory.mktemp("board")
    graph = dp.tf.Graph()
    with graph.as_default():
        fetch = seed_graph()
        with dp.Session(cpus=2, soft=True, optimize=False, graph=graph) as sess:
            dp.init(sess)
            log = dp.tensorboard(sess, fetch, root / "live", tag="colocated")
            saved = dp.run_profile(sess, fetch).save(root / "run.json")
    command = ["tensorboard", saved, "--logdir", str(root / "saved"), "--tag", "saved"]
    assert main(command) == 0
    return log, graph, saved


@pytest.fixture(scope="module")
def board(written):
    """A real `tensorboard` on 127.0.0.1 serving the log; its URL once it lists the tag."""
    log = written[0]
    root = os.path.dirname(log.logdir)
    port = free_port()
    out = open(os.path.join(root, "tensorboard.log"), "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", root]
        + ["--host", "127.0.0.1", "--port", str(port), "--load_fast=false"],
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                info = get(f"{url}/data/plugin/graphs/info", timeout=5)
                if '"live"' in info and '"saved"' in info:
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


def served_graph(url, run):
    text = get(f"{url}/data/plugin/graphs/graph?run={run}&conversions=false")
    return text_format.Parse(text, dp.tf.GraphDef())


def served_metadata(url, run, tag):
    text = get(f"{url}/data/plugin/graphs/run_metadata?run={run}&tag={tag}")
    return text_format.Parse(text, dp.tf.RunMetadata())


@pytest.mark.slow
def test_graph_served_has_each_ops_actual_and_requested_device(written, board):
    log, graph, _ = written
    served = served_graph(board, "live")
    nodes = {node.name: node for node in served.node}
    assert set(nodes) == {op.name for op in graph.get_operations()}
    for op in log.placement.ops:
        assert nodes[op.name].device == op.actual
        assert nodes[op.name].attr[REQUESTED_DEVICE_ATTR].s.decode() == op.requested
    assert len({nodes[op.name].device for op in log.placement.ops}) == 2  # the pin is real


@pytest.mark.slow
def test_run_metadata_served_is_the_traced_runs(written, board):
    log = written[0]
    info = json.loads(get(f"{board}/data/plugin/graphs/info"))
    assert info["live"]["tags"][log.tag]["profile"] is True
    served = served_metadata(board, "live", log.tag)
    assert served == log.run.run_metadata
    durations = {
        (short_device(dev.device), node.node_name): node.all_end_rel_micros
        for dev in served.step_stats.dev_stats
        for node in dev.node_stats
    }
    stats = log.run.op_stats()
    for op in log.placement.ops:  # every op devplace reports ran, timed where it ran
        assert durations[(op.actual, op.name)] == pytest.approx(stats[op.name].duration_us)


@pytest.mark.slow
def test_saved_profile_served_has_its_ops_devices_edges_and_times(written, board):
    saved = read_trace(written[2])
    graph = {node.name: node for node in served_graph(board, "saved").node}
    ran = {op.name: op for op in saved.ops if op.name in graph}
    assert set(ran) >= {"Sin", "Cos", "Variable", "gradients/Sin_grad/mul"}
    for name, op in ran.items():
        assert graph[name].device == op.device and graph[name].op == op.op_type
    assert "Sin" in graph["Cos"].input  # an edge across devices, from the op that sent it
    assert graph["Sin"].device != graph["Cos"].device
    metadata = served_metadata(board, "saved", "saved")
    for dev in metadata.step_stats.dev_stats:
        for node in dev.node_stats:
            op = ran[node.node_name]
            assert dev.device == op.device
            assert node.all_end_rel_micros == round(op.duration_us)
            assert node.output[0].tensor_description.allocation_description.requested_bytes == (
                op.output_bytes
            )
    assert sum(len(dev.node_stats) for dev in metadata.step_stats.dev_stats) == len(ran)


def test_saved_profile_errors_name_the_file(tmp_path, capsys):
    assert main(["tensorboard", str(tmp_path / "none.json"), "--logdir", str(tmp_path)]) == 1
    assert "none.json" in capsys.readouterr().err


def test_each_call_writes_its_own_event_file(written, tmp_path):
    _, graph, _ = written
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
    _, graph, _ = written
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    with graph.as_default(), dp.Session(graph=graph, cpus=2, soft=True) as sess:
        with pytest.raises(ArgumentValueError, match="logdir"):
            dp.tensorboard(sess, "add:0", not_a_folder)
        with pytest.raises(ArgumentValueError, match="tag"):
            dp.tensorboard(sess, "add:0", tmp_path, tag="")


#: The element of TensorBoard's graph dashboard named `tag` (in its pages' shadow DOM).
FIND = """const find = (node, tag) => {
  if (!node) return null;
  if (node.tagName === tag) return node;
  for (const child of [...(node.shadowRoot ? [node.shadowRoot] : []), ...node.children]) {
    const found = find(child, tag);
    if (found) return found;
  }
  return null;
};"""
#: The texts the graph's drawing shows (node and namespace names), [] before it is drawn.
SCENE_TEXTS = f"""(() => {{ {FIND}
  const scene = find(document.documentElement, "TF-GRAPH-SCENE");
  const svg = scene && scene.shadowRoot && scene.shadowRoot.querySelector("svg");
  if (!svg) return [];
  const walker = document.createTreeWalker(svg, NodeFilter.SHOW_TEXT);
  const texts = [];
  while (walker.nextNode()) texts.push(walker.currentNode.textContent.trim());
  return texts;
}})()"""
#: JavaScript: a CSS colour as the page computes it ("#ff7043" -> "rgb(255, 112, 67)").
RGB = "const rgb = c => { const s = new Option().style; s.color = c; return s.color; };"
#: The centre (viewport x, y) of the controls' "Color by: Device" button, scrolled into view.
DEVICE_BUTTON = f"""(() => {{ {FIND}
  const controls = find(document.documentElement, "TF-GRAPH-CONTROLS");
  const root = controls && controls.shadowRoot;
  const button = root && [...root.querySelectorAll("paper-radio-button")]
    .find(b => b.textContent.trim() === "Device");
  if (!button) return null;
  button.scrollIntoView({{block: "center"}});
  const box = button.getBoundingClientRect();
  return [box.left + box.width / 2, box.top + box.height / 2];
}})()"""
#: The legend the controls draw: [text, colour of its icon] per row shown ("unknown device" last).
DRAWN_LEGEND = f"""(() => {{ {FIND} {RGB}
  const controls = find(document.documentElement, "TF-GRAPH-CONTROLS");
  if (!controls || !controls.shadowRoot) return [];
  return [...controls.shadowRoot.querySelectorAll(".color-legend-row")]
    .filter(row => row.getClientRects().length && row.querySelector("tf-graph-icon"))
    .map(row => {{
      const icon = row.querySelector("tf-graph-icon");
      const rect = icon.shadowRoot && icon.shadowRoot.querySelector("rect[fill]");
      const text = row.querySelector(".color-legend-value");
      return [text ? text.textContent.trim() : "", rect ? rgb(rect.getAttribute("fill")) : ""];
    }});
}})()"""
#: Each op node the scene draws: name -> the colours its shape is filled with (the stops of its
#: gradient, once each; [] while it is not filled with a gradient, as colouring by device does).
NODE_COLOURS = f"""(() => {{ {FIND} {RGB}
  const scene = find(document.documentElement, "TF-GRAPH-SCENE");
  const svg = scene && scene.shadowRoot && scene.shadowRoot.querySelector("svg");
  if (!svg) return {{}};
  const gradients = [...svg.querySelectorAll("linearGradient")];
  const colours = {{}};
  for (const node of svg.querySelectorAll("g.node.op[data-name]")) {{
    const shape = node.querySelector(":scope > .nodeshape > .nodecolortarget");
    const url = shape && /url\\("?#(.+?)"?\\)/.exec(shape.style.fill);
    const id = url && url[1].replace(/\\\\(.)/g, "$1");  // the id, unescaped
    const gradient = id && gradients.find(g => g.id === id);
    const stops = gradient ? [...gradient.querySelectorAll("stop")] : [];
    colours[node.dataset.name] = [...new Set(stops.map(s => rgb(s.getAttribute("stop-color"))))];
  }}
  return colours;
}})()"""


def _until(browser, expression, done, seconds=90):
    """Evaluate `expression` in the page until `done(value)`; the last value."""
    deadline = time.monotonic() + seconds
    while not done(value := browser.evaluate(expression)) and time.monotonic() < deadline:
        time.sleep(1)
    return value


@pytest.mark.slow
@pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="no headless Chromium (Debian's `chromium`) on PATH; .ci/run installs it",
)
def test_graphs_dashboard_renders_in_headless_chromium(written, board, tmp_path):
    served = served_graph(board, "live")
    names = {node.name.split("/")[0] for node in served.node}  # top level: ops and namespaces
    in_graph = {short_device(node.device) for node in served.node if node.device}
    ran_on = {short_device(device) for device in written[0].placement.devices}
    nodes = {node.name: node for node in served.node}
    placed = {name for name, node in nodes.items() if node.device}

    def coloured(colours):  # every drawn op that ran is filled with its device's gradient
        return bool(colours) and all(colours[n] for n in colours if n in placed)

    with Chromium(tmp_path / "profile") as browser:
        browser.open(f"{board}/#graphs&run=live")
        shown = _until(browser, SCENE_TEXTS, lambda texts: names <= set(texts))
        button = _until(browser, DEVICE_BUTTON, bool, 30)
        assert button, "no 'Color by: Device' button in the graph's controls"
        browser.click(*button)
        drawn = _until(browser, DRAWN_LEGEND, lambda rows: len(rows) > 1, 30)
        colours = _until(browser, NODE_COLOURS, coloured, 30)
    assert names <= set(shown), f"the drawing shows {sorted(set(shown))}"
    assert drawn and drawn[-1][0] == "unknown device", f"the legend drawn: {drawn}"
    # A row names the end of its device that differs between devices ("CPU:1", or "1").
    devices = {nodes[name].device for name in placed}
    legend = {}
    for text, colour in drawn[:-1]:
        named = [d for d in devices if d.endswith(text)]
        assert len(named) == 1, f"legend row {text!r} names one of {sorted(devices)}"
        legend[named[0]] = colour
    assert ran_on <= {short_device(d) for d in legend} <= in_graph
    assert len(set(legend.values())) == len(legend), f"a colour per device: {legend}"
    drawn_ops = set(colours) & set(nodes)
    assert drawn_ops & placed, f"the scene draws no op that ran: {sorted(colours)}"
    for name in drawn_ops:  # an op that did not run has no device, so no device's colour
        want = [legend[nodes[name].device]] if name in placed else []
        assert colours[name] == want, f"{name} on {nodes[name].device or 'no device'}"


def written_graph(events_file):
    """The GraphDef an event file holds."""
    for event in dp.tf.train.summary_iterator(events_file):
        if event.graph_def:
            return dp.tf.GraphDef.FromString(event.graph_def)
    raise AssertionError(f"no graph in {events_file}")


def test_ops_that_did_not_run_have_no_device_and_say_why(tmp_path):
    graph = dp.tf.Graph()
    with graph.as_default():
        x = dp.constant([1.0, 2.0], name="x")
        with dp.device("/device:GPU:7"):  # no such device: soft placement, and it never runs
            dp.sin(x, name="unused")
        folded = dp.identity(dp.sin(x, name="y"), name="z")  # Grappler folds y into a constant
        with dp.Session(soft=True, graph=graph) as sess:
            log = dp.tensorboard(sess, folded, tmp_path)
    nodes = {node.name: node for node in written_graph(log.events_file).node}
    unused = nodes["unused"]
    assert unused.device == ""  # not coloured as GPU:7, which it asked for and never used
    assert unused.attr[REQUESTED_DEVICE_ATTR].s == b"/device:GPU:7"
    assert unused.attr[NOT_RUN_ATTR].s == b"not needed for the fetches"
    assert "y" in log.placement.optimized_away
    assert nodes["y"].attr[NOT_RUN_ATTR].s == b"optimized away by TF"
    for op in log.placement.ops:
        assert nodes[op.name].device == op.actual
        assert NOT_RUN_ATTR not in nodes[op.name].attr
    assert len(log.placement.devices) == 1
    ops = len(log.placement.ops)
    assert str(log).startswith(f"TensorBoard log of {ops} op{'s' * (ops != 1)} on 1 device in ")


def test_a_saved_profile_is_drawn_from_its_trace_alone(written):
    saved = read_trace(written[2])
    cos = next(op for op in saved.ops if op.name == "Cos")
    assert [name.split("/_")[0] for name in cos.inputs] == ["Sin"]  # received from Sin's device
    from_trace = profile_graph(saved)  # no file to read again: the Trace has what it needs
    assert from_trace == profile_graph(written[2])
    assert "Sin" in {node.name: node for node in from_trace[0].node}["Cos"].input
