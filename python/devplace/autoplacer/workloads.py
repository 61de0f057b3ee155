"""Placement workloads: the shared JSON files and small synthetic graphs.

`load_workload` reads the format of benchmarks/placement/workloads/README.md (Tarnawski et al.,
msr-fiddle/dnn-partitioning) and scores it as that README says: devices acc:0.. (memory cap)
then cpu:0.. (no cap); transfers cost the edge cost between a cpu and an acc, twice that
between two accs, nothing between two cpus, and do not contend.

The synthetic graphs (chain, fork-join, Inception-like module, random layered DAGs) are small
enough (8-14 ops) for the exact placers; they run on one slow CPU and two or three accelerators
with serial transfer channels.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from devplace.autoplacer.graph import Device, PlacementError, Problem

__all__ = [
    "WORKLOAD_DIR",
    "chain",
    "fork_join",
    "inception_module",
    "load_workload",
    "random_layered",
    "shared_workloads",
    "small_graphs",
]

# The three public workloads (copied unchanged, MIT licence, README beside them).
WORKLOAD_DIR = Path(__file__).resolve().parents[3] / "benchmarks" / "placement" / "workloads"


def _need(obj: dict, key: str, where: str) -> object:
    if key not in obj:
        raise PlacementError(
            f"{where} has no {key!r}; "
            "hint: see the format in benchmarks/placement/workloads/README.md"
        )
    return obj[key]


def load_workload(path: str | os.PathLike[str]) -> Problem:
    """A workload JSON file as a placement problem scored as its README says."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise PlacementError(f"cannot read workload {str(path)!r}: {err}") from err
    where = f"workload {path.name!r}"
    nodes = sorted(_need(data, "nodes", where), key=lambda x: x["id"])  # type: ignore[arg-type]
    edges = _need(data, "edges", where)
    n_acc = int(_need(data, "maxFPGAs", where))  # type: ignore[arg-type]
    n_cpu = int(_need(data, "maxCPUs", where))  # type: ignore[arg-type]
    cap = float(_need(data, "maxSizePerFPGA", where))  # type: ignore[arg-type]
    if n_acc + n_cpu == 0:
        raise PlacementError(f"{where} has no devices (maxFPGAs + maxCPUs == 0)")
    devices = [Device(f"acc:{i}", "acc", cap) for i in range(n_acc)]
    devices += [Device(f"cpu:{i}", "cpu") for i in range(n_cpu)]
    index = {}
    for i, node in enumerate(nodes):
        nid = _need(node, "id", f"{where} node #{i}")
        if nid in index:
            raise PlacementError(f"{where} has two nodes with id {nid}")
        index[nid] = i
    n = len(nodes)
    compute = np.empty((n, n_acc + n_cpu))
    groups = np.empty(n, dtype=np.int64)
    for i, node in enumerate(nodes):
        fpga = float(node["fpgaLatency"]) if node.get("supportedOnFpga", True) else np.inf
        compute[i, :n_acc] = fpga
        compute[i, n_acc:] = float(node["cpuLatency"])
        cls = node.get("colorClass")
        groups[i] = int(cls) if cls is not None else -1 - i
    xfer = np.zeros(n)
    pairs = []
    for e in edges:  # type: ignore[union-attr]
        try:
            u, v = index[e["sourceId"]], index[e["destId"]]
        except KeyError as err:
            raise PlacementError(f"{where}: edge {e} names an unknown node id {err}") from err
        pairs.append((u, v))
        xfer[u] = max(xfer[u], float(e["cost"]))
    kinds = np.array([dev.kind for dev in devices])
    beta = np.where(kinds[:, None] != kinds[None, :], 1.0, 0.0)
    beta[(kinds[:, None] == "acc") & (kinds[None, :] == "acc")] = 2.0
    np.fill_diagonal(beta, 0.0)
    memory = np.array([float(node.get("size", 0.0)) for node in nodes])
    has_pred = np.zeros(n, dtype=bool)
    for _, v in pairs:
        has_pred[v] = True
    is_param = ~has_pred & (compute[:, 0] == 0) & (compute[:, -1] == 0) & (memory > 0)
    return Problem(
        names=[str(node.get("name", node["id"])) for node in nodes],
        devices=devices,
        compute=compute,
        edges=pairs,
        xfer=xfer,
        link_alpha=np.zeros_like(beta),
        link_beta=beta,
        memory=memory,
        groups=groups,
        is_param=is_param,
        serial_links=False,
        name=path.stem,
    )


def shared_workloads(folder: str | os.PathLike[str] | None = None) -> list[Problem]:
    """Every *.json workload in `folder` (default: `WORKLOAD_DIR`, the three public ones)."""
    folder = Path(folder) if folder is not None else WORKLOAD_DIR
    files = sorted(folder.glob("*.json"))
    if not files:
        raise PlacementError(
            f"no *.json workloads in {str(folder)!r}; hint: pass a folder of workload files"
        )
    return [load_workload(f) for f in files]


def _small_problem(
    name: str, n: int, edges: list[tuple[int, int]], rng: np.random.Generator, n_acc: int = 2
) -> Problem:
    """Random costs on one CPU (3-5x slower) and `n_acc` accelerators with serial links."""
    devices = [Device("cpu:0", "cpu")] + [Device(f"acc:{i}", "acc") for i in range(n_acc)]
    acc_time = rng.uniform(1.0, 10.0, n)
    slow = rng.uniform(3.0, 5.0, n)
    compute = np.column_stack([acc_time * slow] + [acc_time] * n_acc)
    kinds = np.array([dev.kind for dev in devices])
    beta = np.where(kinds[:, None] != kinds[None, :], 1.0, 2.0)
    np.fill_diagonal(beta, 0.0)
    return Problem(
        names=[f"{name}/op{i}" for i in range(n)],
        devices=devices,
        compute=compute,
        edges=edges,
        xfer=rng.uniform(0.5, 6.0, n),
        link_alpha=np.where(beta > 0, 0.2, 0.0),
        link_beta=beta,
        memory=np.zeros(n),
        name=name,
    )


def chain(n: int = 10, seed: int = 0) -> Problem:
    """A chain of n ops."""
    return _small_problem(
        f"chain{n}", n, [(i, i + 1) for i in range(n - 1)], np.random.default_rng(seed)
    )


def fork_join(width: int = 4, depth: int = 3, seed: int = 0) -> Problem:
    """A source, `width` parallel chains of `depth` ops, and a sink."""
    n = 2 + width * depth
    edges = []
    for w in range(width):
        first = 1 + w * depth
        edges.append((0, first))
        edges += [(first + k, first + k + 1) for k in range(depth - 1)]
        edges.append((first + depth - 1, n - 1))
    return _small_problem(f"forkjoin{width}x{depth}", n, edges, np.random.default_rng(seed))


def inception_module(seed: int = 0) -> Problem:
    """Stem, four Inception branches (1x1; 1x1-3x3; 1x1-5x5; pool-1x1), concat, head: 11 ops."""
    edges = [(0, 1)]  # stem conv -> module input
    edges += [(1, 2)]  # 1x1
    edges += [(1, 3), (3, 4)]  # 1x1 -> 3x3
    edges += [(1, 5), (5, 6)]  # 1x1 -> 5x5
    edges += [(1, 7), (7, 8)]  # pool -> 1x1
    edges += [(2, 9), (4, 9), (6, 9), (8, 9), (9, 10)]  # concat -> head
    return _small_problem("inception", 11, edges, np.random.default_rng(seed), n_acc=3)


def random_layered(n: int = 12, seed: int = 0, n_acc: int = 2) -> Problem:
    """A random layered DAG of n ops (2-4 per layer, each op fed by 1-2 ops of earlier layers)."""
    rng = np.random.default_rng(seed)
    layers: list[list[int]] = []
    count = 0
    while count < n:
        k = min(int(rng.integers(2, 5)) if layers else 1, n - count)
        layers.append(list(range(count, count + k)))
        count += k
    edges = []
    for li in range(1, len(layers)):
        earlier = [u for layer in layers[max(0, li - 2) : li] for u in layer]
        for v in layers[li]:
            k = min(len(earlier), int(rng.integers(1, 3)))
            edges += [(int(u), v) for u in rng.choice(earlier, size=k, replace=False)]
    return _small_problem(f"layered{n}s{seed}", n, edges, rng, n_acc)


def small_graphs() -> list[Problem]:
    """The synthetic benchmark set: chain, fork-join, Inception module, 6 random DAGs (8-14)."""
    graphs = [chain(10), fork_join(4, 3), inception_module()]
    graphs += [random_layered(n, seed) for seed, n in enumerate((8, 9, 10, 12, 13, 14))]
    return graphs
