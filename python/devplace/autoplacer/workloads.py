"""Placement workloads: the shared JSON files and small synthetic graphs.

`load_workload` reads the format of devplace/workloads/README.md (Tarnawski et al.,
msr-fiddle/dnn-partitioning) and scores it as that README says: devices acc:0.. (memory cap)
then cpu:0.. (no cap); transfers cost the edge cost between a cpu and an acc, twice that
between two accs, nothing between two cpus, and do not contend.

The synthetic graphs (chain, fork-join, Inception-like module, random layered DAGs) are small
enough (8-14 ops) for the exact placers; they run on one slow CPU and two or three accelerators
with serial transfer channels.
"""

from __future__ import annotations

import json
import math
import operator
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np

from devplace.autoplacer.graph import AutoPlacementError, Problem, ProblemDevice
from devplace.core._json import parse_json

__all__ = [
    "MAX_CELLS",
    "MAX_DEVICES",
    "MAX_EDGES",
    "MAX_NODES",
    "MAX_WORKLOAD_BYTES",
    "WORKLOAD_DIR",
    "Workload",
    "WorkloadError",
    "bundled_workloads",
    "chain",
    "fork_join",
    "inception_module",
    "load_workload",
    "random_layered",
    "read_workload",
    "shared_workloads",
    "small_graphs",
    "workload_path",
]

# The three public workloads (copied unchanged, MIT licence, README beside them), package data.
WORKLOAD_DIR = Path(__file__).resolve().parents[1] / "workloads"

#: Limits checked before anything is allocated: file size, nodes, edges, devices, and
#: nodes x devices (the size of each per-op, per-device cost matrix).
MAX_WORKLOAD_BYTES = 512 * 2**20
MAX_NODES = 2_000_000
MAX_EDGES = 6_000_000
MAX_DEVICES = 1_024
MAX_CELLS = 20_000_000

_REQUIRED = object()  # marks a field without a default
_FORMAT_HINT = f"see the format in {WORKLOAD_DIR / 'README.md'}"


class WorkloadError(AutoPlacementError):
    """A workload file that cannot be used; names the file and the place inside it."""


@dataclass(frozen=True)
class Workload:
    """A validated workload file: its placement problem and the node id of each op."""

    problem: Problem
    ids: list[int]


def _kind(value: object) -> str:
    """How a JSON value reads in a message: its type and, for scalars, itself."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:40] + "..."
        return f"the string {shown!r}"
    return json.dumps(value)


class _Checker:
    """Checks one workload file's values; every error names the file and the path in it."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, expected: str, found: str, hint: str = _FORMAT_HINT) -> NoReturn:
        """Raise WorkloadError: file, path inside it, what was expected and found, a hint."""
        raise WorkloadError(
            f"workload {str(self.path)!r}: {where}: expected {expected}, found {found}; "
            f"hint: {hint}"
        )

    def field(self, obj: dict, key: str, where: str, default: object = _REQUIRED) -> object:
        """obj[key], or `default`; a missing required key fails naming `where.key`."""
        if key in obj:
            return obj[key]
        if default is _REQUIRED:
            self.fail(f"{where}.{key}" if where else key, f"a {key!r} field", "none")
        return default

    def number(self, value: object, where: str) -> float:
        """A finite number >= 0."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(where, "a finite number >= 0", _kind(value))
        try:
            number = float(value)
        except OverflowError:  # an integer beyond float's range
            number = math.inf
        if not math.isfinite(number) or number < 0:
            self.fail(where, "a finite number >= 0", _kind(value))
        return number

    def column(
        self, items: list[dict], key: str, where: Callable[[int], str], default: object = _REQUIRED
    ) -> list:
        """items[i][key] for every item (`default` when absent); a missing required key named."""
        if default is not _REQUIRED:
            return [item.get(key, default) for item in items]
        try:
            return list(map(operator.itemgetter(key), items))
        except KeyError:
            i = next(i for i, item in enumerate(items) if key not in item)
            self.fail(f"{where(i)}.{key}", f"a {key!r} field", "none")

    def numbers(self, values: list, key: str, where: Callable[[int], str]) -> np.ndarray:
        """`values` as floats, each a finite number >= 0; else the first bad one named."""
        if set(map(type, values)) <= {int, float}:
            try:
                array = np.array(values, dtype=float)
            except OverflowError:
                array = np.array([np.nan])
            if array.size == len(values) and np.all(np.isfinite(array) & (array >= 0)):
                return array
        for i, value in enumerate(values):
            self.number(value, f"{where(i)}.{key}")
        raise AssertionError("numbers: a bad value was not found")  # pragma: no cover

    def integer(self, value: object, where: str, lo: int, hi: int) -> int:
        """An integer in lo..hi."""
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            self.fail(where, f"an integer in {lo}..{hi}", _kind(value))
        return int(value)

    def flag(self, value: object, where: str) -> bool:
        """true/false or 0/1."""
        if value not in (True, False, 0, 1) or isinstance(value, float):
            self.fail(where, "true, false, 0 or 1", _kind(value))
        return bool(value)

    def items(self, data: dict, key: str, limit: int) -> list[dict]:
        """data[key] as a list of at most `limit` objects."""
        value = self.field(data, key, "")
        if not isinstance(value, list):
            self.fail(key, f"a list of {key[:-1]} objects", _kind(value))
        if len(value) > limit:
            self.fail(
                key,
                f"at most {limit:,} {key}",
                f"{len(value):,}",
                "split the graph or coarsen it (fuse ops) before placing it",
            )
        if set(map(type, value)) <= {dict}:  # what json makes of objects
            return value
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                article = "an" if key[0] in "aeiou" else "a"
                self.fail(f"{key}[{i}]", f"{article} {key[:-1]} object", _kind(item))
        return value


def _read_json(path: Path) -> object:
    """The JSON in `path`, refusing files over MAX_WORKLOAD_BYTES before reading them whole."""
    try:
        with open(path, "rb") as f:
            # A regular file's size is known before reading; pipes and devices are read up to
            # the limit and no further.
            size = os.fstat(f.fileno()).st_size
            raw = f.read(MAX_WORKLOAD_BYTES + 1) if size <= MAX_WORKLOAD_BYTES else b""
            size = max(size, len(raw))
    except OSError as err:
        raise WorkloadError(
            f"cannot read workload {str(path)!r}: {err.strerror or err}; "
            "hint: pass the path of a workload JSON file or a bundled workload's name "
            f"({', '.join(bundled_workloads())})"
        ) from err
    if size > MAX_WORKLOAD_BYTES:
        raise WorkloadError(
            f"workload {str(path)!r} is larger than {MAX_WORKLOAD_BYTES:,} bytes; "
            "hint: split the graph or coarsen it (fuse ops) before placing it"
        )
    try:
        return parse_json(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise WorkloadError(
            f"workload {str(path)!r} is not valid JSON ({err}); hint: {_FORMAT_HINT}"
        ) from err
    except RecursionError as err:
        raise WorkloadError(
            f"workload {str(path)!r} is nested too deeply to be a workload; hint: {_FORMAT_HINT}"
        ) from err


def _devices(check: _Checker, data: dict) -> list[ProblemDevice]:
    """acc:0.. (memory cap maxSizePerFPGA) then cpu:0.. (no cap), counts bounded."""
    n_acc = check.integer(check.field(data, "maxFPGAs", ""), "maxFPGAs", 0, MAX_DEVICES)
    n_cpu = check.integer(check.field(data, "maxCPUs", ""), "maxCPUs", 0, MAX_DEVICES)
    cap = check.number(check.field(data, "maxSizePerFPGA", ""), "maxSizePerFPGA")
    if not 1 <= n_acc + n_cpu <= MAX_DEVICES:
        check.fail(
            "maxFPGAs + maxCPUs",
            f"1..{MAX_DEVICES} devices",
            str(n_acc + n_cpu),
            "a workload needs at least one device",
        )
    devices = [ProblemDevice(f"acc:{i}", "acc", cap) for i in range(n_acc)]
    return devices + [ProblemDevice(f"cpu:{i}", "cpu") for i in range(n_cpu)]


@dataclass
class _Nodes:
    """The checked node fields, in file order."""

    ids: list[int]
    compute: np.ndarray
    size: np.ndarray
    classes: list[int | None]
    names: list[str]


def _nodes(check: _Checker, nodes: list[dict], n_acc: int, d: int) -> _Nodes:
    """Every node's fields checked column by column; the first bad value is named."""
    ids = check.column(nodes, "id", lambda i: f"nodes[{i}]")
    if set(map(type, ids)) != {int}:
        i = next(i for i, v in enumerate(ids) if type(v) is not int)
        check.fail(f"nodes[{i}].id", "an integer id", _kind(ids[i]))

    def where(i: int) -> str:
        return f"nodes[{i}] (id {ids[i]})"

    cpu = check.numbers(check.column(nodes, "cpuLatency", where), "cpuLatency", where)
    flags = check.column(nodes, "supportedOnFpga", where, True)
    if not (set(map(type, flags)) <= {bool, int} and set(flags) <= {0, 1}):
        for i, value in enumerate(flags):
            check.flag(value, f"{where(i)}.supportedOnFpga")
    on_acc = np.array(flags, dtype=bool)
    supported = np.flatnonzero(on_acc).tolist()
    acc = np.full(len(nodes), np.inf)
    acc[supported] = check.numbers(
        check.column([nodes[i] for i in supported], "fpgaLatency", lambda k: where(supported[k])),
        "fpgaLatency",
        lambda k: where(supported[k]),
    )
    size = check.numbers(check.column(nodes, "size", where, 0.0), "size", where)
    classes = check.column(nodes, "colorClass", where, None)
    if classes.count(None) < len(classes):
        for i, cls in enumerate(classes):
            if cls is not None:
                classes[i] = check.integer(cls, f"{where(i)}.colorClass", -(2**62), 2**62)
    names = check.column(nodes, "name", where, None)
    compute = np.empty((len(nodes), d))
    compute[:, :n_acc] = acc[:, None]
    compute[:, n_acc:] = cpu[:, None]
    return _Nodes(
        ids=ids,
        compute=compute,
        size=size,
        classes=classes,
        names=[str(i) if x is None else str(x) for i, x in zip(ids, names, strict=True)],
    )


def _rows(ids: list, index: dict[int, int] | None, n: int) -> np.ndarray:
    """The row of each node id in `ids` (`index`; None: the ids are the rows 0..n-1); a
    KeyError for an id that is no node's."""
    if set(map(type, ids)) - {int}:
        raise KeyError
    if index is not None:
        return np.array([index[v] for v in ids], dtype=np.int64)
    try:
        rows = np.array(ids, dtype=np.int64)
    except OverflowError:
        raise KeyError from None
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise KeyError
    return rows


def _identity(ids: list[int]) -> bool:
    """True when the node ids are 0..n-1 in file order (rows are ids: no lookup needed)."""
    try:
        return bool(np.array_equal(np.array(ids, dtype=np.int64), np.arange(len(ids))))
    except OverflowError:
        return False


def _edges(
    check: _Checker, edges: list[dict], index: dict[int, int] | None, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source rows, destination rows and costs of the edges (`index`: node id -> row; None:
    ids are rows 0..n-1); unknown ids and self-loops named."""

    def where(k: int) -> str:
        return f"edges[{k}]"

    ends = []
    for key in ("sourceId", "destId"):
        ids = check.column(edges, key, where)
        try:
            ends.append(_rows(ids, index, n))
        except KeyError:
            known = range(n) if index is None else index
            k = next(k for k, v in enumerate(ids) if type(v) is not int or v not in known)
            check.fail(f"{where(k)}.{key}", "the id of a node in 'nodes'", _kind(ids[k]))
    loops = np.flatnonzero(ends[0] == ends[1])
    if loops.size:
        k = int(loops[0])
        check.fail(
            where(k),
            "an edge between two different nodes",
            f"a self-loop on node id {edges[k]['sourceId']}",
            "placement needs a DAG: drop the edge",
        )
    cost = check.numbers(check.column(edges, "cost", where), "cost", where)
    return ends[0], ends[1], cost


def bundled_workloads() -> list[str]:
    """The names of the workloads shipped with devplace (files in `WORKLOAD_DIR`)."""
    return sorted(f.stem for f in WORKLOAD_DIR.glob("*.json"))


def workload_path(name_or_path: str | os.PathLike[str]) -> Path:
    """`name_or_path` itself when it exists, else the bundled workload of that name.

    A bundled workload may be named with or without `.json` (e.g. `bert24-layers`).
    """
    path = Path(name_or_path)
    if path.exists() or path.parent != Path("."):
        return path
    bundled = WORKLOAD_DIR / path.with_suffix(".json").name
    return bundled if bundled.stem in bundled_workloads() else path


def read_workload(path: str | os.PathLike[str]) -> Workload:
    """Validate a workload JSON file and build its placement problem, scored as its README says.

    `path` may also name a bundled workload (`bundled_workloads()`). Every error is a
    `WorkloadError` naming the file, the place in it (`nodes[17].cpuLatency`),
    what was expected and what was found. Sizes are bounded before anything is allocated:
    `MAX_WORKLOAD_BYTES`, `MAX_NODES`, `MAX_EDGES`, `MAX_DEVICES` and `MAX_CELLS`.
    """
    path = workload_path(path)
    check = _Checker(path)
    data = _read_json(path)
    if not isinstance(data, dict):
        check.fail("the top level", "an object with maxFPGAs, maxCPUs, nodes, edges", _kind(data))
    devices = _devices(check, data)
    nodes = check.items(data, "nodes", MAX_NODES)
    edges = check.items(data, "edges", MAX_EDGES)
    if not nodes:
        check.fail("nodes", "at least one node", "an empty list")
    n, d = len(nodes), len(devices)
    if n * d > MAX_CELLS:
        check.fail(
            "nodes x devices",
            f"at most {MAX_CELLS:,} (node, device) pairs",
            f"{n:,} x {d:,}",
            "place on fewer devices or coarsen the graph",
        )
    n_acc = sum(dev.kind == "acc" for dev in devices)
    fields = _nodes(check, nodes, n_acc, d)
    order = list(range(n))
    index: dict[int, int] | None = None  # ids 0..n-1 in order (as written): rows are ids
    if not _identity(fields.ids):
        order.sort(key=fields.ids.__getitem__)
        index = {}
        for row, i in enumerate(order):
            nid = fields.ids[i]
            if nid in index:
                check.fail(f"nodes[{i}].id", "ids that differ", f"a second node with id {nid}")
            index[nid] = row
    pairs = _edges(check, edges, index, n)
    try:  # what only the whole graph shows: a cycle, a node no device may run
        problem = _problem(path.stem, devices, fields, order, pairs)
    except AutoPlacementError as err:
        raise WorkloadError(f"workload {str(path)!r}: {err}") from None
    return Workload(problem, [fields.ids[i] for i in order])


def _problem(
    name: str,
    devices: list[ProblemDevice],
    fields: _Nodes,
    order: list[int],
    edges: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> Problem:
    """The README's scoring as a Problem: free cpu-cpu links, cost between kinds, 2x acc-acc."""
    n = len(order)
    compute = fields.compute[order]
    memory = fields.size[order]
    classes = [fields.classes[i] for i in order]
    # Nodes without a colour class get groups of their own, numbered past every given class.
    if classes.count(None) == n:
        groups = np.arange(1, n + 1)
    else:
        free = max((c for c in classes if c is not None), default=0) + 1
        groups = np.array([c if c is not None else free + i for i, c in enumerate(classes)])
    src, dst, cost = edges
    xfer = np.zeros(n)
    np.maximum.at(xfer, src, cost)
    has_pred = np.zeros(n, dtype=bool)
    has_pred[dst] = True
    kinds = np.array([dev.kind for dev in devices])
    beta = np.where(kinds[:, None] != kinds[None, :], 1.0, 0.0)
    beta[(kinds[:, None] == "acc") & (kinds[None, :] == "acc")] = 2.0
    np.fill_diagonal(beta, 0.0)
    is_param = ~has_pred & (compute[:, 0] == 0) & (compute[:, -1] == 0) & (memory > 0)
    return Problem(
        names=[fields.names[i] for i in order],
        devices=devices,
        compute=compute,
        edges=np.column_stack((src, dst)),
        xfer=xfer,
        link_alpha=np.zeros_like(beta),
        link_beta=beta,
        memory=memory,
        groups=groups,
        is_param=is_param,
        serial_links=False,
        name=name,
    )


def load_workload(path: str | os.PathLike[str]) -> Problem:
    """A workload JSON file as a placement problem (see `read_workload`)."""
    return read_workload(path).problem


def shared_workloads(folder: str | os.PathLike[str] | None = None) -> list[Problem]:
    """Every *.json workload in `folder` (default: `WORKLOAD_DIR`, the three public ones)."""
    folder = Path(folder) if folder is not None else WORKLOAD_DIR
    files = sorted(folder.glob("*.json"))
    if not files:
        raise AutoPlacementError(
            f"no *.json workloads in {str(folder)!r}; hint: pass a folder of workload files"
        )
    return [load_workload(f) for f in files]


def _small_problem(
    name: str, n: int, edges: list[tuple[int, int]], rng: np.random.Generator, n_acc: int = 2
) -> Problem:
    """Random costs on one CPU (3-5x slower) and `n_acc` accelerators with serial links."""
    devices = [ProblemDevice("cpu:0", "cpu")] + [
        ProblemDevice(f"acc:{i}", "acc") for i in range(n_acc)
    ]
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
