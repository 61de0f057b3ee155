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

import numpy as np

from devplace.autoplacer.graph import Problem
from devplace.autoplacer.placers._common import Assigner

__all__ = ["contiguous", "depth_first_order"]


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


def _cut_costs(problem: Problem, pos: np.ndarray, beta: float, alpha: float) -> np.ndarray:
    """cut[j]: transfer cost of tensors made before position j and used at or after j."""
    diff = np.zeros(problem.n + 1)
    for u in range(problem.n):
        if problem.succs[u]:
            last = max(pos[v] for v in problem.succs[u])
            cost = alpha + beta * problem.xfer[u]
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


def _split(
    problem: Problem, order: list[int], devs: list[int], cpus: list[int]
) -> tuple[float, np.ndarray | None]:
    """The DP over one order: least estimated time and the device of each position."""
    n = problem.n
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    a0, a1 = devs[0], devs[1] if len(devs) > 1 else devs[0]
    base = _cut_costs(problem, pos, 1.0, 0.0)
    aa = problem.link_beta[a0, a1] * base + problem.link_alpha[a0, a1] * (base > 0)
    ac = np.zeros(n)
    if cpus:
        c0 = cpus[0]
        ac = problem.link_beta[a0, c0] * base + problem.link_alpha[a0, c0] * (base > 0)
    fast = np.where(
        problem.allowed[order, a0], problem.compute[order, a0], 1e3 * problem.min_compute()[order]
    )
    w_acc = np.concatenate([[0.0], np.cumsum(fast)])
    w_cpu = np.zeros(n + 1)
    if cpus:
        w_cpu = np.concatenate([[0.0], np.cumsum(problem.compute[order, cpus[0]])])
    mem = np.concatenate([[0.0], np.cumsum(problem.memory[order])])
    cap = float(problem.devices[a0].memory) * (1 + 1e-9)
    lo_of = np.searchsorted(mem, mem - cap, side="left")
    k_max = len(devs)
    # f_acc[k][j] / f_cpu[k][j]: least time covering positions [0, j) with k accelerator
    # pieces, the last piece on an accelerator / on the CPU.
    f_acc = np.full((k_max + 1, n + 1), np.inf)
    f_cpu = np.full((k_max + 1, n + 1), np.inf)
    b_acc = np.zeros((k_max + 1, n + 1, 2), dtype=np.int64)
    b_cpu = np.zeros((k_max + 1, n + 1), dtype=np.int64)
    start_cost = np.full(n + 1, np.inf)
    start_cost[0] = 0.0
    cut_aa = np.concatenate([aa, [0.0]])
    cut_ac = np.concatenate([ac, [0.0]])
    for k in range(0, k_max + 1):
        if k > 0:
            from_acc = f_acc[k - 1] + cut_aa
            from_cpu = f_cpu[k - 1] + cut_ac
            prev = np.minimum(from_acc, from_cpu)
            if k == 1:
                prev = np.minimum(prev, start_cost)
            best, arg = _window_min(prev - w_acc, lo_of)
            f_acc[k] = best + w_acc
            b_acc[k, :, 0] = arg
            b_acc[k, :, 1] = np.where(from_cpu[arg] < from_acc[arg], 1, 0)
        if cpus:
            prev = f_acc[k] + cut_ac
            if k == 0:
                prev = np.minimum(prev, start_cost)
            best, arg = _window_min(prev - w_cpu, np.zeros(n + 1, dtype=np.int64))
            f_cpu[k] = best + w_cpu
            b_cpu[k] = arg
    total = np.minimum(f_acc[:, n], f_cpu[:, n])
    if not np.isfinite(total).any():
        return np.inf, None
    k = int(np.argmin(total))
    on_cpu = bool(f_cpu[k, n] < f_acc[k, n])
    piece = np.empty(n, dtype=np.int64)
    j = n
    while j > 0:
        if on_cpu:
            i = int(b_cpu[k, j])
            piece[i:j] = cpus[0]
            on_cpu = False
        else:
            i, was_cpu = int(b_acc[k, j, 0]), bool(b_acc[k, j, 1])
            piece[i:j] = devs[k - 1]
            k -= 1
            on_cpu = was_cpu and i > 0
        j = i
    return float(total.min()), piece


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
