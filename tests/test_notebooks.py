"""The example notebooks, run by a real Jupyter kernel (this interpreter's ipykernel): their
placement tables name the devices that really ran each op, their pictures decode, and no cell
shows an error or a TensorFlow log line."""

import base64
import contextlib
import io
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import GPUS
from PIL import Image
from test_rich_display import Tables

nbformat = pytest.importorskip("nbformat", reason="the dev extra (nbformat, nbclient, ipykernel)")
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "examples" / "notebooks"
SERVER_START_S = 90
CELL_TIMEOUT_S = 300
# TF's C++ log lines (`I0000 00:00:1795748893.263426 12169 port.cc:153] ...`) and absl's notice
TF_LOG = re.compile(
    r"^[IWEF]\d{4} [\d:.]+ +\d+ \S+:\d+\]|absl::InitializeLog|rebuild TensorFlow with", re.M
)
WIDGET = "application/vnd.jupyter.widget-view+json"


def execute(name, workdir):
    """Run a notebook in a kernel of this interpreter (a kernelspec in `workdir`); returns it."""
    spec = workdir / "kernels" / "devplace-test"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "devplace test", "language": "python"})
    )
    specs = KernelSpecManager(kernel_dirs=[str(workdir / "kernels")])
    # ipc: the kernel talks over Unix sockets in `workdir`, no TCP port opened
    manager = KernelManager(
        kernel_name="devplace-test",
        kernel_spec_manager=specs,
        transport="ipc",
        ip=str(workdir / "kernel"),
    )
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(
        notebook,
        km=manager,
        timeout=CELL_TIMEOUT_S,
        startup_timeout=120,
        resources={"metadata": {"path": str(workdir)}},
    ).execute()
    return notebook


def outputs(notebook):
    return [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]


def check_clean(notebook):
    """No error output, no TF log line in any text the notebook shows."""
    for out in outputs(notebook):
        assert out.output_type != "error", f"{out.ename}: {out.evalue}"
        text = out.get("text", "") + out.get("data", {}).get("text/plain", "")
        assert not TF_LOG.search(text), text


def placement_tables(notebook):
    """Each placement report's ops table as {op: actual device} (the moved mark dropped)."""
    found = []
    for out in outputs(notebook):
        html = out.get("data", {}).get("text/html", "")
        if "<b>Placement</b>" in html:
            rows = Tables(html).tables[0][1:]
            found.append({row[0]: row[3].removesuffix(" *") for row in rows})
    return found


def pictures(notebook):
    return [
        Image.open(io.BytesIO(base64.b64decode(out.data["image/png"])))
        for out in outputs(notebook)
        if "image/png" in out.get("data", {})
    ]


def test_colocate_notebook(tmp_path):
    notebook = execute("colocate.ipynb", tmp_path)
    check_clean(notebook)
    pinned = GPUS[0] if GPUS else "/device:CPU:1"
    default = GPUS[0] if GPUS else "/device:CPU:0"
    colocated, apart = placement_tables(notebook)
    for ran in (colocated, apart):
        assert ran["Variable"] == "/device:CPU:0" and ran["Cos"] == "/device:CPU:0"
        assert ran["Sin"] == pinned
    assert colocated["gradients/Sin_grad/mul"] == pinned  # the gradient went where sin ran
    assert apart["gradients/Sin_grad/mul"] == default
    assert len(pictures(notebook)) == 3  # both profiles' timelines, and the saved one's
    assert all(p.width > 500 and p.height > 100 for p in pictures(notebook))
    widgets = [out for out in outputs(notebook) if WIDGET in out.get("data", {})]
    assert len(widgets) == 2  # run_profile(repeat=20)'s progress bars are notebook widgets
    html = [
        out.data["text/html"] for out in outputs(notebook) if "text/html" in out.get("data", {})
    ]
    comparison = next(h for h in html if "colocate=true vs colocate=false" in h)
    assert "cross-device transfers" in comparison
    # the traces went to a folder of the kernel's own (the saved one read back above), none
    # beside the notebook, where a user's run would leave them in the repository
    assert not list(tmp_path.glob("*.json"))


def test_tf1_chapter12_notebook(tmp_path):
    notebook = execute("tf1_chapter12.ipynb", tmp_path)
    check_clean(notebook)
    (ran,) = placement_tables(notebook)
    assert ran["w"].startswith("/job:ps/replica:0/task:0/")
    assert ran["b"].startswith("/job:ps/replica:0/task:1/")
    # the dequeue asked for worker 1 and ran where its queue lives (TF colocates them)
    assert ran["batch"].startswith("/job:ps/replica:0/task:0/")
    assert ran["y"].startswith("/job:worker/replica:0/task:1/")
    cluster = next(
        out.data["text/html"]
        for out in outputs(notebook)
        if "<b>LocalCluster</b>" in out.get("data", {}).get("text/html", "")
    )
    tasks = [row[0] for row in Tables(cluster).tables[0][1:]]
    assert tasks == [f"/job:{job}/task:{i}" for job in ("ps", "worker") for i in (0, 1)]
    placement = next(
        o.data["text/html"]
        for o in outputs(notebook)
        if "<b>Placement</b>" in o.get("data", {}).get("text/html", "")
    )
    assert "4 cross-device transfers, 32 B" in placement
    (picture,) = pictures(notebook)
    assert picture.width > 500
    printed = "".join(out.get("text", "") for out in outputs(notebook))
    assert "y = [2.5, 8.5]" in printed and "y = [26.5, 32.5]" in printed


def make_notebook_command():
    """The command `make notebook` runs (make's dry run: nothing is installed or started)."""
    done = subprocess.run(
        ["make", "--dry-run", "notebook"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if "jupyter notebook" in line]
    return line.split()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_make_notebook_serves_the_example_notebooks_on_loopback(tmp_path):
    command = make_notebook_command()
    assert command == [".venv/bin/jupyter", "notebook", "--allow-root", "examples/notebooks"]
    jupyter = Path(sys.executable).parent / "jupyter"  # this venv's, as .venv/bin/jupyter
    for tool in ("notebook", "nbconvert"):
        version = subprocess.run(
            [jupyter, tool, "--version"], capture_output=True, text=True, timeout=60
        )
        assert version.returncode == 0 and re.match(r"\d+\.", version.stdout), version.stderr
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path), "JUPYTER_CONFIG_DIR": str(tmp_path)}
    server = subprocess.Popen(
        [
            jupyter,
            *command[1:],
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--port-retries=0",
            f"--IdentityProvider.token={token}",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        listing, deadline = None, time.monotonic() + SERVER_START_S
        while listing is None and time.monotonic() < deadline and server.poll() is None:
            try:
                url = f"http://127.0.0.1:{port}/api/contents?token={token}"
                with urllib.request.urlopen(url, timeout=5) as reply:
                    listing = json.load(reply)
            except OSError:
                time.sleep(0.5)
        assert listing is not None, f"no answer in {SERVER_START_S} s: {server.poll()=}"
        names = {item["name"] for item in listing["content"]}
        assert {"colocate.ipynb", "tf1_chapter12.ipynb"} <= names
    finally:
        server.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=30)
        server.kill()  # nothing left to do once it has stopped on the terminate
        server.wait(timeout=30)
