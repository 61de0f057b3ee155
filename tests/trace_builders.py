"""Hand-made Chrome traces in the shape TensorFlow's timeline writes, and the small two-device
graph the profile and report tests trace."""

import random

import devplace as dp

PREFIX = "/job:localhost/replica:0/task:0"


def process(pid, name):
    return {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}}


def op(pid, name, ts, dur, tid=0, op_type="Sin"):
    args = {"name": name, "op": op_type}
    return {
        "ph": "X",
        "cat": "Op",
        "name": op_type,
        "pid": pid,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def flow(flow_id, name, src_pid, src_ts, dst_pid, dst_ts):
    return [
        {
            "ph": "s",
            "cat": "DataFlow",
            "name": name,
            "pid": src_pid,
            "tid": 0,
            "ts": src_ts,
            "id": flow_id,
        },
        {
            "ph": "t",
            "cat": "DataFlow",
            "name": name,
            "pid": dst_pid,
            "tid": 0,
            "ts": dst_ts,
            "id": flow_id,
        },
    ]


def hand_trace():
    """CPU:0 runs [0,10] and [5,15] on two threads and [20,25]; CPU:1 runs [30,40]."""
    return {
        "traceEvents": [
            process(0, "Allocators"),
            process(1, f"{PREFIX}/device:CPU:1 Compute"),
            process(2, f"{PREFIX}/device:CPU:1 Tensors"),
            process(3, f"{PREFIX}/device:CPU:0 Compute"),
            process(4, f"{PREFIX}/device:CPU:0 Tensors"),
            op(3, "_SOURCE", 900, 1, op_type="NoOp"),
            op(3, "a", 1000, 10),
            op(3, "b", 1005, 10, tid=1),
            op(3, "c", 1020, 5),
            op(1, "d", 1030, 10),
            *flow(7, "c", 3, 1025, 1, 1030),
            *flow(8, "a", 3, 1010, 3, 1020),  # same device: not a transfer
            *flow(9, "c", 3, 1025, 1, 1031),  # a second consumer of the same tensor
        ]
    }


def two_device_graph(device="/cpu:1", shape=(100, 25)):
    """`y = sin(ones(shape))` (named x, y) on `device`, `z = reduce_sum(y)` on CPU:0; returns z.
    The default shape makes y 10,000 bytes of float32."""
    with dp.device(device):
        y = dp.sin(dp.tf.ones(shape, name="x"), name="y")
    with dp.cpu(0):
        return dp.reduce_sum(y, name="z")


TYPES = ["MatMul", "Add", "Relu", "Conv2D", "Mul", "Sum", "Tanh", "Sin", "Cos", "Exp", "Log"]


def synthetic_trace(n_ops: int, seed: int = 1, flow_every: int = 5) -> dict[str, object]:
    """A trace with `n_ops` ops spread over 3 devices, and a cross-device flow per
    `flow_every` ops."""
    rng = random.Random(seed)
    devices = {1: "/device:CPU:0", 2: "/device:CPU:1", 3: "/device:GPU:0"}
    events: list[dict[str, object]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"{name} Compute"}}
        for pid, name in devices.items()
    ]
    t = 0
    for i in range(n_ops):
        pid, dur = rng.choice(list(devices)), rng.randint(1, 50)
        name, kind = f"layer{i // 100}/op{i}", rng.choice(TYPES)
        events.append(
            {
                "ph": "X",
                "name": kind,
                "pid": pid,
                "tid": rng.randint(0, 1),
                "ts": t,
                "dur": dur,
                "args": {"name": name, "op": kind},
            }
        )
        if i % flow_every == 0:
            to = rng.choice([p for p in devices if p != pid])
            events.append(
                {"ph": "s", "cat": "DataFlow", "name": name, "pid": pid, "ts": t + dur, "id": i}
            )
            events.append(
                {"ph": "t", "cat": "DataFlow", "name": name, "pid": to, "ts": t + dur + 3, "id": i}
            )
        t += rng.randint(0, 20)
    return {"traceEvents": events}
