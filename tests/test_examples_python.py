"""Every Python example runs on this machine's devices and prints what its seed describes."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HAS_GPU

from devplace.facts.trace import read_trace

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "python"

# What the chapter-12 program prints, the same from Python and from Julia (its twin).
TF1_CHAPTER12 = [
    "queued: 6",
    "y = [2.5, 8.5]",
    # the dequeue asked for worker 1 runs beside its queue on ps 0 (TF colocates them)
    re.compile(
        r"^batch +QueueDequeueManyV2 +/job:worker/task:1/device:CPU:0 +"
        r"/job:ps/replica:0/task:0/device:CPU:0 \*",
        re.M,
    ),
    # batch/n to ps 0; batch (16 B), w (8 B) and b (4 B) to worker 1
    "4 cross-device transfers, 32 bytes",
    "y = [26.5, 32.5]",
]

EXPECTED = {
    "device_scope.py": [
        "a.device = /device:GPU:0",
        "sin(1) = 0.84147",
        # requested GPU:0; ran there, or on CPU:0 (marked moved) where there is no GPU
        re.compile(
            r"^Sin\W+Sin\W+/device:GPU:0\W+"
            + (r"/device:GPU:0[ \t]*$" if HAS_GPU else r"/device:CPU:0 \*"),
            re.M,
        ),
        # the fetch is no transfer, from a GPU as from a CPU
        "0 cross-device transfers, 0 bytes",
        "fetched to the client: 1 tensor, 4 bytes, from /device:"
        + ("GPU:0" if HAS_GPU else "CPU:0"),
    ],
    "device_function.py": [
        "a.device = /device:CPU:0",
        "b.device = /device:GPU:0",
        "d.device = /device:GPU:0",
    ],
    "colocate_gradients.py": [
        "colocate=True: dc/da + c = 0.26350",
        "colocate=False: dc/da + c = 0.26350",
    ],
    "batch_norm_updates.py": [
        "batch_norm/update_moving_mean ran on /device:CPU:0",
        "moving mean after 20 steps",
    ],
    "placement_by_op_type.py": [
        "a: /cpu:0  b: /gpu:0  c: /gpu:0",
        "c = 12.0  e = 12.0",
        "mul_1            Mul         /device:CPU:1  /device:CPU:1",
    ],
    "round_robin_variables.py": [
        "w4: requested /device:CPU:1, ran on /device:CPU:1",
        "sum of all weights = 2100.0",
        "'/device:CPU:0': 40000",
    ],
    "soft_placement.py": [
        "without soft placement: cannot place op 'Variable' on /device:GPU:0",
        "with soft placement: i = 3",
        "requested /device:GPU:0, ran on /device:CPU:0",
    ],
    "placement_logging.py": [
        "c = 12.0",
        "   a: (VariableV2): /job:localhost/replica:0/task:0/device:CPU:0",
    ],
    "control_dependencies.py": ["x waits for: ['Const', 'add']", "z = 7.0"],
    # one GPU split into four logical ones; without a GPU, soft placement and saying so
    "virtual_gpus.py": [
        "tower3/bn3/update_moving_mean ran on /device:CPU:0",
        *(
            [
                "w2: requested /device:GPU:2, ran on /device:GPU:2",
                re.compile(r"^tower 3 ran on /device:CPU:0 \(\d+ ops\), /device:GPU:3 \(", re.M),
            ]
            if HAS_GPU
            else [
                "no GPU here: soft placement runs every /gpu:i op on the CPU",
                re.compile(r"^tower 3 ran on /device:CPU:0 \(\d+ ops\)$", re.M),
            ]
        ),
    ],
    "thread_pools.py": [
        "inter_op_parallelism_threads = 2  intra_op_parallelism_threads = 1",
        "use_per_session_threads = True",
    ],
    "tf1_chapter12.py": [*TF1_CHAPTER12, "profile: "],
}


def run_example(name, cwd):
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name)], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_every_example_has_expectations():
    on_disk = {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("cluster_")}
    assert on_disk == set(EXPECTED)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name, tmp_path):
    result = run_example(name, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    for fragment in EXPECTED[name]:
        found = (
            fragment.search(result.stdout)
            if isinstance(fragment, re.Pattern)
            else (fragment in result.stdout)
        )
        assert found, f"{fragment!r} not in output:\n{result.stdout}"
    if name == "virtual_gpus.py":
        before, after = re.search(r"loss (\S+) before, (\S+) after", result.stdout).groups()
        assert float(after) < float(before), result.stdout
    if name == "colocate_gradients.py":
        for profile in ("true.json", "false.json"):
            assert "traceEvents" in json.loads((tmp_path / profile).read_text())
        # the seeds' GPU:0 is real or a second logical CPU: colocating changes the transfers
        counts = re.findall(r"^(\d+) cross-device transfers", result.stdout, re.M)
        assert len(counts) == 2 and counts[0] != counts[1], result.stdout
        assert ("no GPU here: the seeds' /device:GPU:0 is logical" in result.stdout) != HAS_GPU
    if name == "tf1_chapter12.py":
        out = tmp_path / "out" / "tf1_chapter12"  # never the current folder itself
        trace = read_trace(out / "queue.json")
        assert (trace.transfer_count, trace.transfer_bytes) == (4, 32)
        assert (out / "queue.png").read_bytes().startswith(b"\x89PNG")
        assert not list(tmp_path.glob("queue.*"))
