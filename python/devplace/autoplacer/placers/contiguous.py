"""Contiguous split: the model cut into consecutive pieces on accelerators and the CPU.

The order is a topological order (depth-first ones put each op right after the inputs it
needs, so a weight sits next to its user). An accelerator piece must fit its memory; a CPU
piece has no cap and all CPU pieces share CPU 0. Cutting before position j costs the transfer
time of every tensor made before j and used at or after j (between two accelerators, or an
accelerator and the CPU). A sliding-window dynamic programme (as Tarnawski et al.'s for
pipelines) picks the pieces minimising compute plus cut cost, at most one accelerator piece
per accelerator. Without accelerators the pieces go to the CPU devices instead.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from devplace.autoplacer.graph import Problem, link_time
from devplace.autoplacer.placers._common import Assigner, Placer, Solution

__all__ = ["PLACER", "contiguous", "depth_first_order"]


def depth_first_order(problem: Problem, latest_first: bool = True) -> list[int]:
    """Topological order emitting each op right after its not-yet-emitted inputs.

    With `latest_first` the latest-made input is visited first, so side inputs (weights) land
    right before their user; otherwise the earliest-made one.
    """
    sign = -1 if latest_first else 1
    done = np.zeros(problem.n, dtype=bool)
    order: list[int] = []
    for root in problem.topo:
        if problem.succs[root] or done[root]:
            continue
        stack = [(root, 0)]
        while stack:
            v, k = stack.pop()
            if done[v]:
                continue
            preds = sorted(problem.preds[v], key=lambda u: sign * problem.topo_index[u])
            if k < len(preds):
                stack.append((v, k + 1))
                if not done[preds[k]]:
                    stack.append((preds[k], 0))
                continue
            done[v] = True
            order.append(v)
    return order


def _crossing_costs(problem: Problem, a: int, b: int, units: np.ndarray) -> np.ndarray:
    """The link time from device a to b of each cut's `units` (its alpha only where something
    crosses)."""
    return link_time(problem.link_alpha[a, b] * (units > 0), problem.link_beta[a, b], units)


def _cut_costs(problem: Problem, pos: np.ndarray, beta: float, alpha: float) -> np.ndarray:
    """cut[j]: transfer cost of tensors made before position j and used at or after j."""
    diff = np.zeros(problem.n + 1)
    for u in range(problem.n):
        if problem.succs[u]:
            last = max(pos[v] for v in problem.succs[u])
            cost = link_time(alpha, beta, problem.xfer[u])
            diff[pos[u] + 1] += cost
            diff[last + 1] -= cost
    return np.cumsum(diff)[: problem.n]


def _window_min(values: np.ndarray, lo_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each j in 1..n: min and argmin of values[i] over lo_of[j] <= i < j."""
    n = len(values) - 1
    best = np.full(n + 1, np.inf)
    arg = np.zeros(n + 1, dtype=np.int64)
    window: deque[int] = deque()
    for j in range(1, n + 1):
        i = j - 1
        if np.isfinite(values[i]):
            while window and values[window[-1]] >= values[i]:
                window.pop()
            window.append(i)
        while window and window[0] < lo_of[j]:
            window.popleft()
        if window:
            best[j], arg[j] = values[window[0]], window[0]
    return best, arg


@dataclass
class _Prefix:
    """Costs along one order, indexed by position 0..n: compute of positions [0, j) on the
    accelerator and on the CPU, cutting before j to another accelerator or the CPU, and the
    first position a memory-capped accelerator piece ending at j can start from."""

    w_acc: np.ndarray
    w_cpu: np.ndarray
    cut_aa: np.ndarray
    cut_ac: np.ndarray
    lo_of: np.ndarray


def _prefix(problem: Problem, order: list[int], devs: list[int], cpus: list[int]) -> _Prefix:
    """The prefix costs of `order` (accelerators `devs`, the CPU pieces on `cpus[0]`)."""
    n = problem.n
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    a0, a1 = devs[0], devs[1] if len(devs) > 1 else devs[0]
    base = _cut_costs(problem, pos, 1.0, 0.0)
    aa = _crossing_costs(problem, a0, a1, base)
    # An op a device cannot run costs 1000x its best time there: a finite penalty keeps the
    # prefix sums finite (an infinite one makes differences of them inf - inf = NaN).
    penalty = 1e3 * problem.min_compute()[order]

    def cost_on(dev: int) -> np.ndarray:
        return np.where(problem.allowed[order, dev], problem.compute[order, dev], penalty)

    ac = np.zeros(n)
    w_cpu = np.zeros(n + 1)
    if cpus:
        c0 = cpus[0]
        ac = _crossing_costs(problem, a0, c0, base)
        w_cpu = np.concatenate([[0.0], np.cumsum(cost_on(c0))])
    fast = cost_on(a0)
    mem = np.concatenate([[0.0], np.cumsum(problem.memory[order])])
    cap = float(problem.devices[a0].memory) * (1 + 1e-9)
    return _Prefix(
        w_acc=np.concatenate([[0.0], np.cumsum(fast)]),
        w_cpu=w_cpu,
        cut_aa=np.concatenate([aa, [0.0]]),
        cut_ac=np.concatenate([ac, [0.0]]),
        lo_of=np.searchsorted(mem, mem - cap, side="left"),
    )


@dataclass
class _Tables:
    """The DP: f_acc[k][j] / f_cpu[k][j] is the least time covering positions [0, j) with k
    accelerator pieces, the last piece on an accelerator / on the CPU; b_acc / b_cpu where
    that last piece starts (b_acc also whether the piece before it was on the CPU)."""

    f_acc: np.ndarray
    f_cpu: np.ndarray
    b_acc: np.ndarray
    b_cpu: np.ndarray


def _fill_tables(pre: _Prefix, k_max: int, with_cpu: bool) -> _Tables:
    """Fill the DP tables for up to `k_max` accelerator pieces (CPU pieces if `with_cpu`)."""
    n = len(pre.w_acc) - 1
    t = _Tables(
        f_acc=np.full((k_max + 1, n + 1), np.inf),
        f_cpu=np.full((k_max + 1, n + 1), np.inf),
        b_acc=np.zeros((k_max + 1, n + 1, 2), dtype=np.int64),
        b_cpu=np.zeros((k_max + 1, n + 1), dtype=np.int64),
    )
    start_cost = np.full(n + 1, np.inf)
    start_cost[0] = 0.0
    for k in range(0, k_max + 1):
        if k > 0:
            from_acc = t.f_acc[k - 1] + pre.cut_aa
            from_cpu = t.f_cpu[k - 1] + pre.cut_ac
            prev = np.minimum(from_acc, from_cpu)
            if k == 1:
                prev = np.minimum(prev, start_cost)
            best, arg = _window_min(prev - pre.w_acc, pre.lo_of)
            t.f_acc[k] = best + pre.w_acc
            t.b_acc[k, :, 0] = arg
            t.b_acc[k, :, 1] = np.where(from_cpu[arg] < from_acc[arg], 1, 0)
        if with_cpu:
            prev = t.f_acc[k] + pre.cut_ac
            if k == 0:
                prev = np.minimum(prev, start_cost)
            best, arg = _window_min(prev - pre.w_cpu, np.zeros(n + 1, dtype=np.int64))
            t.f_cpu[k] = best + pre.w_cpu
            t.b_cpu[k] = arg
    return t


def _pieces(t: _Tables, k: int, devs: list[int], cpus: list[int]) -> np.ndarray:
    """Walk the DP back from its best end with k accelerator pieces: device per position."""
    n = t.f_acc.shape[1] - 1
    on_cpu = bool(t.f_cpu[k, n] < t.f_acc[k, n])
    piece = np.empty(n, dtype=np.int64)
    j = n
    while j > 0:
        if on_cpu:
            i = int(t.b_cpu[k, j])
            piece[i:j] = cpus[0]
            on_cpu = False
        else:
            i, was_cpu = int(t.b_acc[k, j, 0]), bool(t.b_acc[k, j, 1])
            piece[i:j] = devs[k - 1]
            k -= 1
            on_cpu = was_cpu and i > 0
        j = i
    return piece


def _split(
    problem: Problem, order: list[int], devs: list[int], cpus: list[int]
) -> tuple[float, np.ndarray | None]:
    """The DP over one order: least estimated time and the device of each position."""
    tables = _fill_tables(_prefix(problem, order, devs, cpus), len(devs), bool(cpus))
    total = np.minimum(tables.f_acc[:, -1], tables.f_cpu[:, -1])
    if not np.isfinite(total).any():
        return np.inf, None
    k = int(np.argmin(total))
    return float(total.min()), _pieces(tables, k, devs, cpus)


def contiguous(problem: Problem) -> np.ndarray:
    """Least-cost split of a topological order into accelerator and CPU pieces.

    Three orders are tried (depth-first latest input first, depth-first earliest input first,
    Kahn's); the one whose split the DP estimates fastest is used.
    """
    accs = [i for i, dev in enumerate(problem.devices) if dev.kind != "cpu"]
    cpus = [i for i, dev in enumerate(problem.devices) if dev.kind == "cpu"]
    devs = accs or cpus
    if not accs:
        cpus = []
    state = Assigner(problem)
    orders = [depth_first_order(problem), depth_first_order(problem, False), list(problem.topo)]
    splits = [(*_split(problem, order, devs, cpus), order) for order in orders]
    _, piece, order = min(splits, key=lambda item: item[0])
    if piece is None:
        return _fill(problem, state, orders[0], devs)
    for p_, op in enumerate(order):
        mask = state.feasible_mask(op)
        want = int(piece[p_])
        state.put(op, want if mask[want] else int(np.argmax(mask)))
    return state.result()


def _fill(problem: Problem, state: Assigner, order: list[int], accs: list[int]) -> np.ndarray:
    """No memory-feasible split: fill accelerators in order, overflow to other devices."""
    current = 0
    for op in order:
        mask = state.feasible_mask(op)
        while current < len(accs) - 1 and not mask[accs[current]]:
            current += 1
        state.put(op, accs[current] if mask[accs[current]] else int(np.argmax(mask)))
    return state.result()


PLACER = Placer(
    "contiguous", lambda problem, _budget: Solution(contiguous(problem)), "greedy", portfolio=True
)
