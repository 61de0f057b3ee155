"""The seeds' colocate experiment: the same graph with gradients colocated or not, profiled.

The seeds build `a = Variable(1.0)` and `b = sin(a)` under `assign_to_device("/device:GPU:0")`
(the variable goes to CPU:0, `sin` to GPU:0), `c = cos(b)` on CPU:0, then
`g = gradients(c, a, colocate=...)`, and profile `g + c` once per setting (true.json,
false.json). Colocated, the gradient of `sin` runs on `sin`'s device; otherwise every gradient
op goes to the default device.

Without a GPU, pinning to GPU:0 with soft placement would put *everything* on CPU:0 and the
two runs would not differ. So on a CPU-only machine the seeds' GPU:0 is mapped onto a second
logical CPU device, `/device:CPU:1`: the ops really run on a different device, TensorFlow
really inserts send/receive pairs between the two, and colocation really changes where the
gradient ops run. Logical CPU devices share one thread pool and copy nothing, so their times
do not rank the placements (the printed table and the picture say so); the placement and the
transfers are the real result. On a machine with a GPU, GPU:0 is used as the seeds use it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import devplace as dp
from devplace.facts.comparison import Comparison
from devplace.facts.profile import Profile
from devplace.facts.report import PlacementReport
from devplace.views.plot import compare_profiles

__all__ = ["DemoResult", "DemoRun", "device_mapping", "gradient_ops", "gradient_pairs", "run_demo"]

SEED_GPU = "/device:GPU:0"
SEED_CPU = "/device:CPU:0"


def device_mapping(devices: list[str]) -> dict[str, str]:
    """Where the seeds' devices go on a machine with `devices`: GPU:0 itself when present,
    else the logical `/device:CPU:1` (the session is then made with two CPU devices)."""
    if SEED_GPU in devices:
        return {SEED_GPU: SEED_GPU, SEED_CPU: SEED_CPU}
    return {SEED_GPU: "/device:CPU:1", SEED_CPU: SEED_CPU}


def gradient_ops(report: PlacementReport) -> list[str]:
    """The ops `gradients` built that ran (under `gradients/`), as the picture hatches them:
    those differentiating a forward op and those seeding the backward pass (`grad_ys_0`)."""
    return [op.name for op in report.ops if op.name.startswith("gradients/")]


def gradient_pairs(report: PlacementReport) -> list[tuple[str, str]]:
    """(gradient op, forward op) for every gradient op that ran, by TF's `gradients/<op>_grad/`
    naming; the gradient ops of the seed graph whose forward op also ran."""
    ran = {op.name for op in report.ops}
    pairs = []
    for op in report.ops:
        parts = op.name.split("/")
        if len(parts) >= 3 and parts[0] == "gradients" and parts[-2].endswith("_grad"):
            forward = "/".join(parts[1:-2] + [parts[-2][: -len("_grad")]])
            if forward in ran:
                pairs.append((op.name, forward))
    return pairs


@dataclass
class DemoRun:
    """One setting of `colocate`: its trace file, profile and placement report."""

    colocate: bool
    trace_path: str
    profile: Profile
    report: PlacementReport

    @property
    def colocated_gradients(self) -> int:
        """Gradient ops that ran on the same device as the forward op they differentiate."""
        return sum(
            self.report.actual(g) == self.report.actual(f) for g, f in gradient_pairs(self.report)
        )


@dataclass
class DemoResult:
    """Both runs, the picture comparing them, the device mapping used, this machine's
    `devices` and those of the demo's sessions (`session_devices`)."""

    runs: dict[bool, DemoRun]
    picture: str
    mapping: dict[str, str]
    devices: list[str]
    comparison: Comparison
    session_devices: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _session_devices(cpus: int | None = None) -> list[str]:
    graph = dp.tf.Graph()
    with dp.Session(cpus=cpus, graph=graph) as sess:
        return sess.devices()


def _build(colocate: bool, mapping: dict[str, str]) -> tuple[Any, Any]:
    """The seed graph in a fresh `tf.Graph`; returns (graph, fetch `g + c`)."""
    graph = dp.tf.Graph()
    with graph.as_default():
        with dp.device(dp.assign_to_device(mapping[SEED_GPU])):
            a = dp.Variable(1.0)
            b = dp.sin(a)
        with dp.device(mapping[SEED_CPU]):
            c = dp.cos(b)
        g = dp.gradients(c, a, colocate=colocate)
        fetch = g + c
    return graph, fetch


def _run(
    colocate: bool, mapping: dict[str, str], out: str, repeat: int, cpus: int | None
) -> DemoRun:
    graph, fetch = _build(colocate, mapping)
    # optimize=False: Grappler would otherwise fold and fuse ops across devices and blur the
    # placement being shown. soft=True as in the seeds' sessions with GPU pins.
    with dp.Session(cpus=cpus, soft=True, optimize=False, graph=graph) as sess:
        dp.init(sess)
        profile = dp.run_profile(sess, fetch, repeat=repeat)
    path = profile.save(os.path.join(out, f"{str(colocate).lower()}.json"))
    return DemoRun(colocate, path, profile, profile.run.placement())


def _output_folder(out: str | os.PathLike[str]) -> str:
    out = os.fspath(out)
    if os.path.exists(out) and not os.path.isdir(out):
        raise NotADirectoryError(
            f"demo output {out!r} exists and is not a folder; pick another --out"
        )
    os.makedirs(out, exist_ok=True)
    return out


def _notes(session_devices: list[str], mapping: dict[str, str]) -> list[str]:
    notes = [f"devices the demo's sessions see: {', '.join(session_devices)}"]
    if mapping[SEED_GPU] == SEED_GPU:
        return notes + [
            f"the seeds' {SEED_GPU} is this machine's GPU; ops pinned nowhere (with "
            f"colocate=false: every gradient op) go to TensorFlow's default device, {SEED_GPU}."
        ]
    return notes + [
        f"no GPU here: the seeds' {SEED_GPU} is mapped onto logical {mapping[SEED_GPU]} "
        "(the sessions are made with a second logical CPU device), so the ops pinned to the "
        "GPU really run on another device and colocation really moves the gradient ops.",
        "ops pinned nowhere (with colocate=false: every gradient op) go to TensorFlow's "
        f"default device, {SEED_CPU} here (GPU:0 on a machine with a GPU).",
    ]


def _run_summary(run: DemoRun) -> list[str]:
    report = run.report
    control = sum(t.control for t in report.transfers)
    edges = f", {control} of them control edges" if control else ""
    pairs = gradient_pairs(report)
    return [
        "",
        f"== colocate={str(run.colocate).lower()}: gradients(c, a, colocate={run.colocate}) ==",
        report.table(),
        f"gradient ops: {len(gradient_ops(report))}, of which {len(pairs)} differentiate a "
        f"forward op and {run.colocated_gradients}/{len(pairs)} ran on its device; "
        f"cross-device transfers: {report.transfer_count} "
        f"({report.transfer_bytes} bytes{edges}); trace: {run.trace_path}",
    ]


def _picture(runs: dict[bool, DemoRun], mapping: dict[str, str], path: str) -> Comparison:
    title = "gradients(c, a, colocate=true) vs colocate=false"
    if mapping[SEED_GPU] != SEED_GPU:
        title += f" (no GPU here: the seeds' GPU:0 is the logical {mapping[SEED_GPU]})"
    return compare_profiles(
        runs[True].trace_path,
        runs[False].trace_path,
        path,
        labels=("colocate=true", "colocate=false"),
        title=title,
    )


def run_demo(
    out: str | os.PathLike[str],
    repeat: int = 5,
    devices: list[str] | None = None,
    echo: Callable[[str], None] = print,
) -> DemoResult:
    """Run the colocate experiment into folder `out` (created if needed): writes true.json,
    false.json and colocate.png, and echoes placements, transfers and the comparison.

    `devices` defaults to what a session on this machine sees.
    """
    out = _output_folder(out)
    devices = _session_devices() if devices is None else devices
    mapping = device_mapping(devices)
    cpus = None if mapping[SEED_GPU] == SEED_GPU else 2
    session_devices = _session_devices(cpus)
    notes = _notes(session_devices, mapping)
    for note in notes:
        echo(note)
    runs = {}
    for colocate in (True, False):
        runs[colocate] = _run(colocate, mapping, out, repeat, cpus)
        for line in _run_summary(runs[colocate]):
            echo(line)
    picture = os.path.join(out, "colocate.png")
    comparison = _picture(runs, mapping, picture)
    echo("")
    echo(comparison.table())
    echo(f"picture: {picture}")
    return DemoResult(runs, picture, mapping, devices, comparison, session_devices, notes)
