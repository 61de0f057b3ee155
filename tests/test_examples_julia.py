"""Each Julia example (examples/julia/*.jl, the seeds' snippets) runs as a script and prints
what the seeds say it should."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import HAS_GPU
from julia_runner import REPO, TRANSPORTS, run_julia
from test_examples_python import TF1_CHAPTER12

from devplace.facts.trace import read_trace

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

EXAMPLES = sorted((REPO / "examples" / "julia").glob("*.jl"))

#: Lines each example must print (the seeds' `a.device` answers and the like).
EXPECTED = {
    "device_scope": [
        "a.device = /device:GPU:0",
        "b.device = /device:GPU:0",
        "sin(1) = 0.84147",
        # the fetch is no transfer, from a GPU as from a CPU (a Float64 variable: 8 bytes)
        "0 cross-device transfers, 0 bytes",
        "fetched to the client: 1 tensor, 8 bytes, from /device:"
        + ("GPU:0" if HAS_GPU else "CPU:0"),
    ],
    "device_function": ["a.device = /device:CPU:0", "b.device = /device:GPU:0"],
    "device_macros": [
        "a.device = /device:CPU:0  b.device = /device:CPU:0",
        "c.device = /device:CPU:1",
    ],
    "colocate_gradients": [
        "colocate=true: dc/da + c = 0.263504302340027",
        "colocate=false: dc/da + c = 0.263504302340027",
    ],
    "batch_norm_updates": ["batch_norm/update_moving_mean ran on /device:CPU:0"],
    "placement_by_op_type": ["a: /cpu:0  b: /gpu:0  c: /gpu:0", "c = 12.0  e = 12.0"],
    "placement_logging": ["c = 12.0", "captured placement log:", "(VariableV2)"],
    "round_robin_variables": ["w1: requested /device:CPU:1, ran on /device:CPU:1"],
    "soft_placement": ["without soft placement: ", "with soft placement: i = 3"],
    "control_dependencies": ['x waits for: ["Const", "add"]', "z = 7.0"],
    "cluster_ps_workers": ["restored the checkpoint of step 3", "step 8: loss = "],
    "cluster_across_hosts": [
        "total = [12.0 21.0; 26.0 47.0]",
        "right ran on /job:worker/replica:0/task:1/device:CPU:0",
        "/job:worker/task:1 stopped",
    ],
    "tf1_chapter12": [
        *TF1_CHAPTER12,
        re.compile(r"^profile: \d+ ops on \d+ devices, picture \S*/queue\.png$", re.M),
    ],
    "thread_pools": ["inter_op_parallelism_threads = 2  intra_op_parallelism_threads = 1"],
    # one GPU split into four logical ones; without a GPU, soft placement and saying so
    "virtual_gpus": [
        "tower3/bn3/update_moving_mean ran on /device:CPU:0",
        *(
            ["w2: requested /device:GPU:2, ran on /device:GPU:2", "/device:GPU:3 ("]
            if HAS_GPU
            else [
                "no GPU here: soft placement runs every /gpu:i op on the CPU",
                "tower 3 ran on /device:CPU:0 (",
            ]
        ),
    ],
}


def test_every_python_example_has_a_julia_twin() -> None:
    python = {p.stem for p in (REPO / "examples" / "python").glob("*.py")}
    julia = {p.stem for p in EXAMPLES}
    assert python <= julia, sorted(python - julia)
    assert set(EXPECTED) == julia


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path: Path, transport: str, tmp_path: Path) -> None:
    done = run_julia([str(path)], cwd=tmp_path, timeout=500, transport=transport)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    for line in EXPECTED[path.stem]:
        found = line.search(done.stdout) if isinstance(line, re.Pattern) else line in done.stdout
        assert found, (line, done.stdout[-3000:])
    if path.stem == "virtual_gpus":
        before, after = re.search(r"loss (\S+) before, (\S+) after", done.stdout).groups()
        assert float(after) < float(before), done.stdout
        towers = re.findall(r"^tower (\d) ran on (.*)$", done.stdout, re.M)
        on_gpu = [f"/device:GPU:{i} (" in ran for i, ran in towers]
        assert len(towers) == 4 and on_gpu == [HAS_GPU] * 4, done.stdout
    if path.stem == "colocate_gradients":
        for name in ("true.json", "false.json"):
            trace = json.loads((tmp_path / name).read_text())
            assert trace["traceEvents"], name
        counts = dict(re.findall(r"^colocate=(true|false): (\d+) transfers$", done.stdout, re.M))
        assert set(counts) == {"true", "false"}, done.stdout[-3000:]
        assert counts["true"] != counts["false"], counts  # colocation changes the transfers
        assert ("no GPU here: the seeds' /device:GPU:0 is logical" in done.stdout) != HAS_GPU
    if path.stem == "tf1_chapter12":
        out = tmp_path / "out" / "tf1_chapter12"  # never the current folder itself
        trace = read_trace(out / "queue.json")
        assert (trace.transfer_count, trace.transfer_bytes) == (4, 32)
        assert (out / "queue.png").read_bytes().startswith(b"\x89PNG")
        assert not list(tmp_path.glob("queue.*"))
