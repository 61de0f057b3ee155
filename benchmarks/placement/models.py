"""TF graphs for the placement benchmark: two-tower MLP, small Inception stack, LSTM seq2seq.

Each builder makes its graph in a new `dp.tf.Graph` and returns (graph, fetch, feed, init).
All are inference steps of modest size so a profile takes seconds on two cores.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import devplace as dp

tf = dp.tf

Built = tuple[Any, Any, dict[Any, np.ndarray], Any]


def _dense(x: Any, width: int, name: str, act: Callable[[Any], Any] | None = tf.nn.relu) -> Any:
    w = tf.Variable(tf.random.normal([int(x.shape[-1]), width], stddev=0.05), name=f"{name}_w")
    b = tf.Variable(tf.zeros([width]), name=f"{name}_b")
    y = tf.nn.bias_add(tf.matmul(x, w), b)
    return act(y) if act else y


def two_tower_mlp(batch: int = 128, width: int = 512, depth: int = 4, prefix: str = "") -> Built:
    """Two MLP towers over the same input, joined by a sum and a head; `prefix` starts every
    variable's name (servers keep variables by name: graphs sharing a cluster need their own)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [batch, width], name="x")
        towers = []
        for t in range(2):
            h = x
            for k in range(depth):
                h = _dense(h, width, f"{prefix}tower{t}_l{k}")
            towers.append(h)
        y = tf.reduce_mean(_dense(towers[0] + towers[1], 10, f"{prefix}head", act=None), name="y")
        init = tf.global_variables_initializer()
    return graph, y, {x: np.ones([batch, width], np.float32)}, init


def _conv(x: Any, k: int, out: int, name: str) -> Any:
    cin = int(x.shape[-1])
    w = tf.Variable(tf.random.normal([k, k, cin, out], stddev=0.05), name=f"{name}_w")
    return tf.nn.relu(tf.nn.conv2d(x, w, strides=1, padding="SAME"))


def inception_stack(batch: int = 8, size: int = 28, modules: int = 2) -> Built:
    """A stem convolution and `modules` Inception modules (four branches each)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [batch, size, size, 3], name="images")
        h = _conv(x, 3, 32, "stem")
        for m in range(modules):
            b1 = _conv(h, 1, 16, f"m{m}_b1")
            b2 = _conv(_conv(h, 1, 16, f"m{m}_b2a"), 3, 24, f"m{m}_b2b")
            b3 = _conv(_conv(h, 1, 8, f"m{m}_b3a"), 5, 12, f"m{m}_b3b")
            pool = tf.nn.max_pool2d(h, 3, 1, "SAME")
            b4 = _conv(pool, 1, 12, f"m{m}_b4")
            h = tf.concat([b1, b2, b3, b4], axis=-1)
        y = tf.reduce_mean(h, name="y")
        init = tf.global_variables_initializer()
    return graph, y, {x: np.ones([batch, size, size, 3], np.float32)}, init


def _lstm_step(x: Any, h: Any, c: Any, w: Any, b: Any) -> tuple[Any, Any]:
    gates = tf.nn.bias_add(tf.matmul(tf.concat([x, h], axis=1), w), b)
    i, f, g, o = tf.split(gates, 4, axis=1)
    c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
    return tf.sigmoid(o) * tf.tanh(c), c


def lstm_seq2seq(batch: int = 32, hidden: int = 128, steps: int = 6) -> Built:
    """An unrolled LSTM encoder and decoder (`steps` each) with a projection per output."""
    graph = tf.Graph()
    with graph.as_default():
        xs = tf.placeholder(tf.float32, [steps, batch, hidden], name="source")
        cells = {}
        for part in ("enc", "dec"):
            cells[part] = (
                tf.Variable(
                    tf.random.normal([2 * hidden, 4 * hidden], stddev=0.05), name=f"{part}_w"
                ),
                tf.Variable(tf.zeros([4 * hidden]), name=f"{part}_b"),
            )
        h = c = tf.zeros([batch, hidden])
        for t in range(steps):
            h, c = _lstm_step(xs[t], h, c, *cells["enc"])
        outs = []
        y = tf.zeros([batch, hidden])
        for _ in range(steps):
            h, c = _lstm_step(y, h, c, *cells["dec"])
            y = _dense(h, hidden, f"proj{len(outs)}", act=tf.tanh)
            outs.append(y)
        loss = tf.reduce_mean(tf.add_n(outs), name="y")
        init = tf.global_variables_initializer()
    return graph, loss, {xs: np.ones([steps, batch, hidden], np.float32)}, init


MODELS: dict[str, Callable[[], Built]] = {
    "two_tower_mlp": two_tower_mlp,
    "inception_stack": inception_stack,
    "lstm_seq2seq": lstm_seq2seq,
}


def _matmul_layers(h: Any, depth: int, scope: str, summed: bool = False) -> Any:
    """`depth` layers of tanh(h @ w) under name scope `scope` (square n x n weights), with
    `summed` reduced to a scalar there too."""
    n = int(h.shape[-1])
    with tf.name_scope(scope):
        for k in range(depth):
            w = tf.Variable(tf.random.normal([n, n], stddev=n**-0.5), name=f"l{k}_w")
            h = tf.tanh(tf.matmul(h, w))
        return tf.reduce_sum(h) if summed else h


def _branches(n: int, depths: dict[str, int], tail: int = 0) -> Built:
    """Branches of n x n matmul layers (`depths`: scope -> layers) from one fed input, joined
    by a sum; with `tail`, the branches' sum goes on through a chain of `tail` layers (scope
    "narrow")."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [n, n], name="x")
        outs = [_matmul_layers(x, depth, scope, not tail) for scope, depth in depths.items()]
        if tail:
            outs = [_matmul_layers(tf.add_n(outs), tail, "narrow", summed=True)]
        y = tf.add_n(outs, name="y")
        init = tf.global_variables_initializer()
    return graph, y, {x: np.ones([n, n], np.float32)}, init


def four_branches(n: int = 384, depths: tuple[int, ...] = (9, 7, 6, 5)) -> Built:
    """Four unequal branches of n x n matmuls (`depths` layers each) joined by a sum: its best
    2-way grouping puts branches 0 and 3 on one task and 1 and 2 on the other."""
    return _branches(n, {f"b{b}": depth for b, depth in enumerate(depths)})


def uneven_branches(n: int = 384) -> Built:
    """Three branches of unequal depth (10, 6 and 4 layers): the deep one alone balances the
    two shallow ones."""
    return _branches(n, {"u0": 10, "u1": 6, "u2": 4})


def wide_then_narrow(n: int = 384) -> Built:
    """A wide layer (four branches of 4 layers) joined into a narrow chain of 6 layers: only
    the wide part can be split, the chain runs on one task after it."""
    return _branches(n, {f"w{b}": 4 for b in range(4)}, tail=6)


def diamond(n: int = 384, depth: int = 5) -> Built:
    """A stem of 2 layers, then two diamonds: each splits into two paths of `depth` layers
    that rejoin (a sum) in the middle of the graph, before the next diamond."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [n, n], name="x")
        h = _matmul_layers(x, 2, "stem")
        for k in range(2):
            h = tf.add(
                _matmul_layers(h, depth, f"d{k}a"), _matmul_layers(h, depth, f"d{k}b"), f"join{k}"
            )
        y = tf.reduce_sum(h, name="y")
        init = tf.global_variables_initializer()
    return graph, y, {x: np.ones([n, n], np.float32)}, init


def wide_two_tower() -> Built:
    """two_tower_mlp large enough (about 25 ms a step on one core) for a split to pay."""
    return two_tower_mlp(batch=256, width=1024, depth=4, prefix="wide_")


#: Graphs whose one-task step is 20 ms or more on one core: a split across two tasks pays.
WIDE_MODELS: dict[str, Callable[[], Built]] = {
    "four_branches": four_branches,
    "wide_two_tower": wide_two_tower,
    "uneven_branches": uneven_branches,
    "wide_then_narrow": wide_then_narrow,
    "diamond": diamond,
}
