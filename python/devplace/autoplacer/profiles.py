"""`profile_devices`: profile a graph on each device (or task) in turn, for the measured cost
model; `profiled_cost`: what `autoplace(session=...)` uses when given no profile."""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from devplace.adapter.devices import canonical_device, matches, parse_device
from devplace.adapter.feeds import accepts_feed_dict
from devplace.autoplacer.cost import CostModel, DeviceProfiles, session_target, task_of
from devplace.autoplacer.graph import AutoPlacementError
from devplace.autoplacer.measure import master_task, measure_servers, task_links
from devplace.autoplacer.timing import step_time_us
from devplace.core.errors import DevplaceWarning, user_stacklevel

__all__ = ["PROFILE_REPEAT", "POOL_WITHIN", "pool_equal_tasks", "profile_devices", "profiled_cost"]

#: Traced steps per device profile (each op's time their median; the untraced step that
#: calibrates it is the median of three times as many): more runs per median, so a burst of
#: load on a shared machine moves a task's profile, and with it the pick, less (was 7).
PROFILE_REPEAT = 11

#: Tasks whose untraced single steps differ by less than this fraction (and that run as many
#: ops at once) are taken as equal machines: their profiles are pooled (`pool_equal_tasks`).
POOL_WITHIN = 0.10

#: Per graph: (target, devices, fetched ops, fed names) -> the profiles and server facts
#: measured for them (`CostModel` fields).
_CACHE: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], dict[str, Any]]] = (
    weakref.WeakKeyDictionary()
)


def _cpus_needed(names: list[str]) -> int:
    """Logical CPU devices a session needs so that every named CPU device exists."""
    cpus = [
        parse_device(x).device_index or 0 for x in names if parse_device(x).device_type == "CPU"
    ]
    return max(cpus, default=0) + 1


def _sharing(names: list[str], cores: Mapping[str, int] | None) -> dict[str, str]:
    """device -> the earlier device whose profile it shares: another task's device of the same
    type and index, whose task has as many `cores` (tasks missing from `cores` share nothing)."""
    shared: dict[str, str] = {}
    seen: dict[tuple[str | None, int | None, int], str] = {}
    for name in names:
        task, dev = task_of(name), parse_device(name)
        if task is None or cores is None or task not in cores:
            continue
        key = (dev.device_type, dev.device_index, int(cores[task]))
        if key in seen:
            shared[name] = seen[key]
        else:
            seen[key] = name
    return shared


def _present(sess: Any, name: str, soft: bool) -> None:
    """Nothing when `sess` has device `name`; else an AutoPlacementError naming it and the
    devices there, or with `soft` a DevplaceWarning (its profile then says where its ops ran)."""
    have = [d.name for d in sess.list_devices()]
    if any(matches(name, h) for h in have):
        return
    short = sorted({canonical_device(h) for h in have})
    if not soft:
        raise AutoPlacementError(
            f"profile_devices: device {name!r} does not exist here (the session has {short}); "
            "hint: profile only devices it has, or pass soft=True to profile it where TF's soft "
            "placement puts its ops (each entry's 'device' says where)"
        )
    warnings.warn(
        f"profile_devices: device {name!r} does not exist here (the session has {short}); its "
        "ops were profiled where soft placement put them, and each entry's 'device' says where",
        DevplaceWarning,
        stacklevel=user_stacklevel(),
    )


def _profile_on(
    sess_or_graph: Any,
    graph: Any,
    fetches: Any,
    name: str,
    names: list[str],
    feed: Any,
    repeat: int,
    soft: bool = False,
    one_at_a_time: bool = False,
) -> tuple[dict[str, dict[str, Any]], float, float]:
    """Per-op median times of `fetches` with every op of `graph` on `name` (soft placement,
    graph rewriting off, variables initialised), in a fresh session on the same target, the
    median untraced step time (µs) there and the median span of the traced steps' ops (µs);
    `name` must exist there (`_present`). `one_at_a_time`: the traced steps run their ops one
    after another (`_one_at_a_time`), in a session of their own."""
    import devplace as dp
    from devplace.adapter._tf import set_op_device, tf

    for op in graph.get_operations():
        set_op_device(op, name)
    with graph.as_default():
        inits = [v.initializer for v in tf.global_variables()]
    target = session_target(sess_or_graph)
    where = {"target": target} if target else {"cpus": _cpus_needed(names)}

    def fresh_session() -> Any:
        return dp.Session(graph=graph, soft=True, optimize=False, **where)

    def traced(sess: Any) -> Any:
        return dp.run_profile(sess, fetches, feed, repeat=repeat, progress=False)

    with fresh_session() as sess:
        _present(sess, name, soft)
        if inits:
            sess.run(inits)
        # Untraced first: after traced steps a session's untraced steps run slower (up to 2x
        # for a small graph on a server), and the calibration needs what a user's step costs.
        step = step_time_us(sess, fetches, feed, runs=max(3 * repeat, 10))
        prof = None if one_at_a_time else traced(sess)
    if prof is None:  # a session of its own: a session keeps the graph it first ran
        with _one_at_a_time(graph, fetches, feed), fresh_session() as sess:
            if inits:
                sess.run(inits)
            prof = traced(sess)
    ops = {
        k: {"type": v.op_type, "device": v.device, "us": v.duration_us, "bytes": v.output_bytes}
        for k, v in prof.op_stats.items()
    }
    return ops, step, prof.step_time_us


#: Ops TF's control flow is made of: an edge into (or out of) one from another frame breaks it.
_CONTROL_FLOW = {
    "Enter", "RefEnter", "Exit", "RefExit", "Merge", "RefMerge", "Switch", "RefSwitch",
    "NextIteration", "RefNextIteration", "LoopCond",
}  # fmt: skip


@contextmanager
def _one_at_a_time(graph: Any, fetches: Any, feed: Any) -> Iterator[None]:
    """Within: the ops `fetches` run (but the fed ones, those without inputs and those of
    control flow) run one after another in graph order (a control edge from each to the
    next), so that each op's traced time is its own, not shared with ops running beside it on
    the same cores; the edges are gone afterwards."""
    from devplace.adapter._tf import add_control_input, in_control_flow, set_control_inputs
    from devplace.autoplacer.tf_graph import fetch_closure

    fed = {getattr(k, "op", None) for k in (feed or {})}
    chain = [
        op
        for op in fetch_closure(fetches, graph)
        if op.inputs and op not in fed and op.type not in _CONTROL_FLOW and not in_control_flow(op)
    ]
    before = {op: list(op.control_inputs) for op in chain}
    for prev, op in zip(chain, chain[1:], strict=False):
        if prev not in before[op]:
            add_control_input(op, prev)
    try:
        yield
    finally:
        for op, inputs in before.items():
            set_control_inputs(op, inputs)


@accepts_feed_dict
def profile_devices(
    sess_or_graph: Any,
    fetches: Any,
    devices: Sequence[str] = ("/device:CPU:0", "/device:GPU:0"),
    feed: Any = None,
    repeat: int = PROFILE_REPEAT,
    cores: Mapping[str, int] | None = None,
    soft: bool = False,
    one_at_a_time: bool | Collection[str] = False,
) -> DeviceProfiles:
    """Per-op median times of `fetches` with the whole graph on each of `devices` in turn.

    `sess_or_graph`: a session (its graph is profiled, on its target: devices of a cluster's
    tasks, `/job:J/task:T/device:CPU:0`, are profiled one task after another) or a `tf.Graph`
    (profiled in this process). Each device gets a fresh session (soft placement, so ops
    without a kernel there fall back and the profile records where they ran; graph rewriting
    off, so the ops timed are the graph's own) with every global variable initialised, and
    `dp.run_profile(repeat=repeat)`, after its untraced step is timed (`DeviceProfiles.steps`,
    which calibrates the profile: `autoplacer.calibration`). `cores` (task -> its cores,
    e.g. `{"/job:worker/task:1": 1}`): a task of the same device type and cores as one
    profiled before shares its profile instead of being profiled (`DeviceProfiles.shared`
    says which). A device the session does not have is an `AutoPlacementError` naming it
    (e.g. `/device:GPU:0` on a machine without a GPU), unless `soft=True`: then a
    `DevplaceWarning` says so and its profile records where soft placement ran each op
    (its `device`), so the model never takes it for that device's own times.
    `one_at_a_time` (True, or the devices it holds for): the traced steps there run the ops
    one after another (control edges in graph order, for those steps only), so each op's time
    is its own, as a device that runs one op at a time takes it (two ops on one core
    otherwise share it, and each looks up to twice as slow). The graph's
    devices and control inputs are restored afterwards. Pass the result to
    `CostModel.from_profiles`; `save` it and `DeviceProfiles.load` it to reuse it.
    """
    from devplace.adapter._tf import set_op_device, tf
    from devplace.autoplacer.tf_graph import device_names

    graph = sess_or_graph if isinstance(sess_or_graph, tf.Graph) else sess_or_graph.graph
    names = device_names(devices)
    shared = _sharing(names, cores)
    ops = graph.get_operations()
    before = [op.device for op in ops]
    profiles: dict[str, dict[str, dict[str, Any]]] = {}
    steps: dict[str, float] = {}
    spans: dict[str, float] = {}
    try:
        for name in names:
            if name not in shared:
                alone = one_at_a_time is True or (
                    not isinstance(one_at_a_time, bool)
                    and any(canonical_device(d) == canonical_device(name) for d in one_at_a_time)
                )
                profiles[name], steps[name], spans[name] = _profile_on(
                    sess_or_graph, graph, fetches, name, names, feed, repeat, soft, alone
                )
    finally:
        for op, dev in zip(ops, before, strict=True):
            set_op_device(op, dev)
    return DeviceProfiles(profiles, shared, steps, spans)


def pool_equal_tasks(
    profiles: DeviceProfiles, threads: Mapping[str, int], within: float = POOL_WITHIN
) -> tuple[DeviceProfiles, list[str]]:
    """`profiles` with the devices of equal tasks sharing one profile: each op's time the mean
    of theirs. Equal: the same device type and index, as many `threads`, and untraced single
    steps within `within` of each other. Two traced profiles of equal machines still differ op
    by op (noise of a few % to 20 %), and a search that may put each op where its profile is
    luckiest finds splits that only look fast; pooled, only what differs between the tasks
    (their step, which calibrates each) stays. Returns the profiles and one note per pool."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for dev in profiles.profiles:
        task, spec = task_of(dev), parse_device(dev)
        if task is not None and dev in profiles.steps and task in threads:
            groups.setdefault((spec.device_type, spec.device_index, threads[task]), []).append(dev)
    pooled = {dev: dict(ops) for dev, ops in profiles.profiles.items()}
    notes = []
    for devs in groups.values():
        steps = [profiles.steps[d] for d in devs]
        if len(devs) < 2 or max(steps) > (1 + within) * min(steps):
            continue
        for op in set.intersection(*(set(profiles.profiles[d]) for d in devs)):
            entries = [profiles.profiles[d][op] for d in devs]
            if len({e.get("device") for e in entries}) > 1:  # soft placement moved it somewhere
                continue
            mean = sum(float(e["us"]) for e in entries) / len(entries)
            for d, e in zip(devs, entries, strict=True):
                pooled[d][op] = {**e, "us": mean}
        spread = max(steps) / min(steps) - 1
        notes.append(
            f"pooled the profiles of {', '.join(devs)}: equal tasks (single steps within "
            f"{spread:.0%}, as many threads), so each op's time is the mean of theirs"
        )
    return DeviceProfiles(pooled, profiles.shared, profiles.steps, profiles.spans), notes


def _cache_key(session: Any, fetches: Any, devices: list[str], feed: Any) -> tuple[Any, ...]:
    from devplace.autoplacer.tf_graph import fetch_closure

    fetched = tuple(op.name for op in fetch_closure(fetches, session.graph))
    fed = tuple(sorted(getattr(k, "name", str(k)) for k in (feed or {})))
    return (session_target(session), tuple(devices), fetched, fed)


def profiled_cost(
    session: Any,
    fetches: Any,
    devices: Sequence[str],
    feed: Any,
    cost: CostModel | None,
    notes: list[str],
) -> CostModel:
    """`cost` (default `CostModel.from_profiles`'s) with `devices` profiled on `session`'s
    target; for devices of two or more tasks also the links between the tasks and the servers'
    constants (`devplace.autoplacer.measure`). Measured once per graph, devices, fetches and
    feed, then cached for the graph; `notes` gets a line saying which."""
    from devplace.autoplacer.tf_graph import device_names

    names = device_names(devices)
    key = _cache_key(session, fetches, names, feed)
    cached = _CACHE.setdefault(session.graph, {})
    if key in cached:
        notes.append(f"used the profiles of {', '.join(names)} cached for this graph")
    else:
        cached[key], pooled = _measured(session, fetches, names, feed)
        what = "profiled " + ", ".join(names)
        if "task_links" in cached[key]:
            what += "; measured the links between their tasks and the servers' step costs"
        notes.append(what + " (no profile was given); cached for this graph")
        notes.extend(pooled)
    found = cached[key]
    return CostModel.from_profiles(**found) if cost is None else replace(cost, **found)


def _measured(
    session: Any, fetches: Any, names: list[str], feed: Any
) -> tuple[dict[str, Any], list[str]]:
    """Profiles of `names`, and for two or more tasks their links and constants, as
    `CostModel` fields (equal tasks' profiles pooled; a task that runs one op at a time
    profiled one op at a time); and the notes of the pooling."""
    notes: list[str] = []
    tasks = sorted({t for t in map(task_of, names) if t is not None})
    master = master_task(session)
    if master in tasks:  # the master first: measure_servers times it alone
        tasks = [master, *(t for t in tasks if t != master)]
    if len(tasks) <= 1:
        return {"profiles": profile_devices(session, fetches, names, feed)}, notes
    servers = measure_servers(session, tasks)
    # A task whose CPU runs one op at a time is simulated so: its ops' times must be their own
    # (a GPU's launches are asynchronous, and profiled as they are).
    alone = [
        n
        for n in names
        if parse_device(n).device_type == "CPU" and servers.threads.get(task_of(n) or "") == 1
    ]
    profiles = profile_devices(session, fetches, names, feed, one_at_a_time=alone)
    pooled, notes = pool_equal_tasks(profiles, servers.threads)
    return {
        "profiles": pooled,
        "task_links": task_links(session, tasks),
        "task_threads": dict(servers.threads),
        "task_step_us": servers.task_step_us,
        "step_us": servers.base_us,
        "master_task_us": servers.master_task_us,
        "remote_start_us": servers.remote_start_us,
        "master": master,
    }, notes
