"""The host process (`python -m devplace.bridge`) driven over its pipes, as DevPlace.jl does."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from bridge_client import HostError, HostProcess
from bridge_vectors import same

from devplace.bridge import PROTOCOL_VERSION, frames, wire
from devplace.bridge.wire import Handle, JuliaRef

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]  # each test starts a host process


@pytest.fixture(scope="module")
def host() -> Iterator[HostProcess]:
    h = HostProcess()
    yield h
    assert h.close() == 0


def test_hello_names_protocol_and_pid(host: HostProcess) -> None:
    assert host.hello["protocol"] == PROTOCOL_VERSION == 5
    assert host.hello["pid"] == host.proc.pid == host.request("stats")["pid"]


def test_values_travel_by_value(host: HostProcess) -> None:
    value = [1, 2.5, "x", None, (True, b"\x00"), {"a": np.arange(6.0).reshape(2, 3, order="F")}]
    assert same(host.request("echo", value), value)


def test_objects_travel_as_handles_and_are_released(host: HostProcess) -> None:
    base = host.request("stats")["handles"]
    cls = host.request("builtin", "object")
    objs = [host.request("call", cls, (), None) for _ in range(50)]
    assert all(type(o) is Handle for o in objs) and len({o.id for o in objs}) == 50
    assert host.request("stats")["handles"] == base + 51
    host.release([o.id for o in objs] + [cls.id, 10**9])  # unknown ids are ignored
    assert host.request("stats")["handles"] == base


def json_error(host: HostProcess) -> HostError:
    loads = host.request("getattr", host.request("import", "json"), "loads")
    with pytest.raises(HostError) as err:
        host.request("call", loads, ("{x",), None)
    return err.value


def test_python_errors_carry_type_message_and_the_callers_frames(host: HostProcess) -> None:
    err = json_error(host)
    assert err.type == "json.decoder.JSONDecodeError"
    assert err.message.startswith("Expecting property name")
    assert err.traceback.startswith("Traceback (most recent call last):")
    assert "json/decoder.py" in err.traceback
    assert "devplace/bridge" not in err.traceback  # the bridge's own frames are left out
    assert err.message not in err.traceback  # shown first by Julia, not again at the end
    int_ = host.request("builtin", "int")
    with pytest.raises(HostError) as only_bridge:
        host.request("call", int_, ("twelve",), None)
    assert only_bridge.value.type == "ValueError" and "twelve" in only_bridge.value.message
    assert only_bridge.value.traceback == ""  # no frame but the bridge's: no traceback at all


def test_devplace_debug_shows_the_bridge_frames() -> None:
    h = HostProcess(env={"DEVPLACE_DEBUG": "1"})
    try:
        assert "devplace/bridge/requests.py" in json_error(h).traceback
    finally:
        assert h.close() == 0


def test_misused_operations_are_named(host: HostProcess) -> None:
    with pytest.raises(HostError, match="echo"):
        host.request("echo", 1, 2)
    with pytest.raises(HostError, match="unknown opcode 99"):
        host.request(99)
    with pytest.raises(HostError, match="handle 123456 is not in the Python host's table"):
        host.request("repr", Handle(123456))
    with pytest.raises(HostError, match="no builtin named 'nope'"):
        host.request("builtin", "nope")


def test_by_handle_keeps_convertible_results_remote(host: HostProcess) -> None:
    lst = host.request("builtin", "list")
    remote = host.request("call", lst, ([1, 2],), None, by_handle=True)
    assert type(remote) is Handle
    host.request("call", host.request("getattr", remote, "append"), (3,), None)
    assert host.request("len", remote) == 3
    assert host.request("repr", remote) == "[1, 2, 3]"


def test_callbacks_nest_and_release(host: HostProcess) -> None:
    base = host.request("stats")["julia_functions"]
    builtins_map = host.request("builtin", "map")
    lst = host.request("builtin", "list")
    str_ = host.request("builtin", "str")

    made: list[Handle] = []

    def outer(x: int) -> str:
        # a callback that itself calls Python, which calls back into "Julia" again
        inner = host.request("call", builtins_map, (JuliaRef(2, "inner"), [x]), None)
        made.append(inner)
        return host.request("call", str_, (host.request("call", lst, (inner,), None),), None)

    host.callbacks[1] = outer
    host.callbacks[2] = lambda x: x * 10
    mapped = host.request("call", builtins_map, (JuliaRef(1, "outer"), [1, 2]), None)
    assert host.request("call", lst, (mapped,), None) == ["[10]", "[20]"]
    assert host.request("stats")["julia_functions"] == base + 3
    host.release([h.id for h in [mapped, *made]])  # the map objects held the proxies
    host.request("stats")  # the next message after the release carries the proxies' release
    assert host.request("stats")["julia_functions"] == base
    assert {1, 2} <= set(host.released)


def test_julia_errors_come_back_as_julia_error(host: HostProcess) -> None:
    def fail(x: int) -> int:
        raise ValueError(f"no {x}")

    host.callbacks[3] = fail
    lst = host.request("builtin", "list")
    builtins_map = host.request("builtin", "map")
    with pytest.raises(HostError) as err:
        host.request(
            "call",
            lst,
            (host.request("call", builtins_map, (JuliaRef(3, "fail"), [7]), None),),
            None,
        )
    assert err.value.type == "devplace.bridge.callbacks.JuliaError"
    assert err.value.message == "ValueError: no 7"


def test_with_blocks_see_julia_errors(host: HostProcess) -> None:
    contextlib = host.request("import", "contextlib")
    suppress = host.request("getattr", contextlib, "suppress")
    err_cls = host.request("import", "devplace.bridge.callbacks")
    julia_error = host.request("getattr", err_cls, "JuliaError")
    manager = host.request("call", suppress, (julia_error,), None)
    host.request("enter", manager)
    assert host.request("exit", manager, ("ErrorException", "boom", "")) is True
    plain = host.request("call", suppress, (), None)
    host.request("enter", plain)
    assert host.request("exit", plain, ("ErrorException", "boom", "")) is False
    assert host.request("exit", plain, None) is False


def test_output_of_the_host_cannot_corrupt_frames(host: HostProcess) -> None:
    os_ = host.request("import", "os")
    write = host.request("getattr", os_, "write")
    assert host.request("call", write, (1, b"\x05\x00\x00\x00junk on fd 1\n"), None) > 0
    print_ = host.request("builtin", "print")
    host.request("call", print_, ("junk on sys.stdout",), {"flush": True})
    system = host.request("getattr", os_, "system")
    assert host.request("call", system, ("echo junk from a subprocess",), None) == 0
    assert host.request("echo", "still in sync") == "still in sync"


def test_numpy_results_keep_dtype_and_layout(host: HostProcess) -> None:
    np_ = host.request("import", "numpy")
    arange = host.request("getattr", np_, "arange")
    a = host.request("call", arange, (6,), {"dtype": np.float32})
    assert a.dtype == np.float32 and a.tolist() == [0, 1, 2, 3, 4, 5]
    reshape = host.request("getattr", np_, "reshape")
    m = host.request("call", reshape, (a, (2, 3)), None)
    assert m.shape == (2, 3) and m[1, 0] == 3.0
    assert (
        type(host.request("call", host.request("getattr", np_, "float64"), (2,), None))
        is np.float64
    )


def test_frames_are_length_prefixed(host: HostProcess) -> None:
    body = bytes([15]) + wire.encode_bytes((42,))
    host.send_frame(frames.REQUEST, 77, body)
    kind, seq, reply = host.read_frame()
    assert (kind, seq, wire.decode(reply)) == (frames.REPLY, 77, 42)


def test_end_of_input_is_a_clean_exit() -> None:
    h = HostProcess()
    assert h.request("echo", 1) == 1
    assert h.close() == 0


class Nester:
    """A client-side "Julia" function that calls back into Python through `map` `n` deep."""

    def __init__(self, host: HostProcess) -> None:
        self.host = host
        self.list = host.request("builtin", "list")
        self.map = host.request("builtin", "map")
        host.callbacks[10] = self

    def __call__(self, n: int) -> int:
        if n == 0:
            return 0
        mapped = self.host.request("call", self.map, (JuliaRef(10, "nest"), [n - 1]), None)
        return 1 + self.host.request("call", self.list, (mapped,), None)[0]


def test_callbacks_nest_to_the_recursion_limit_and_fail_clearly_beyond(host: HostProcess) -> None:
    keep = host.request("call", host.request("builtin", "object"), (), None)
    nest = Nester(host)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # this client recurses as deep as the host
    try:
        assert nest(50) == 50
        with pytest.raises(HostError) as err:
            nest(2000)
        # the depth the host allows with its default limit (1000 frames): about 120 levels
        deepest = 0
        for n in (60, 90, 100, 110, 115, 120, 125):
            try:
                deepest = nest(n)
            except HostError:
                break
    finally:
        sys.setrecursionlimit(old)
    assert deepest >= 100
    assert "CallbackDepthError" in err.value.message
    assert "recursion limit (1000 frames)" in err.value.message
    assert "Hint" in err.value.message
    assert host.request("repr", keep).startswith("<object object")  # objects alive, in sync
    assert host.request("echo", "in sync") == "in sync"


LOOP = """
import time
state = {}
def loop(f):
    try:
        while True:
            f()
    except BaseException as exc:
        state["unwound"] = type(exc).__name__  # as ADCME's BFGS! assigns its last step
        raise
def sleep(seconds):
    time.sleep(seconds)
    return "slept"
"""


def python_names(host: HostProcess) -> dict[str, Any]:
    """LOOP's functions and its `state`, defined in the host."""
    ns = host.request("call", host.request("builtin", "dict"), (), None, by_handle=True)
    host.request("call", host.request("builtin", "exec"), (LOOP, ns), None)
    get = host.request("getattr", ns, "get")
    return {
        name: host.request("call", get, (name,), None, by_handle=True)
        for name in ("loop", "sleep", "state")
    }


def interrupt(host: HostProcess, seq: int) -> None:
    """What Julia does on Ctrl-C while it waits for request `seq`: one SIGINT, then ABANDON."""
    host.proc.send_signal(signal.SIGINT)
    time.sleep(0.3)  # the signal has reached the host, which is in its own code
    host.send_frame(frames.ABANDON, seq, b"")


@pytest.fixture
def looping() -> Iterator[tuple[HostProcess, dict[str, Any]]]:
    """A fresh host with LOOP's names (Ctrl-C tests end with the host still serving)."""
    h = HostProcess()
    yield h, python_names(h)
    assert h.close() == 0, h.stderr


def start_loop(host: HostProcess, names: dict[str, Any]) -> tuple[int, int]:
    """LOOP's `loop` of a Julia function started: its request's seq and its first callback's."""
    running = host.send_request("call", names["loop"], (JuliaRef(7, "f"),), None)
    kind, callback, _ = host.read_message()
    assert kind == frames.CALLBACK
    return running, callback


def test_ctrl_c_during_a_callbacks_wait_unwinds_the_request_before_the_next_one(looping) -> None:
    host, names = looping
    running, callback = start_loop(host, names)
    interrupt(host, running)  # the host waits for the callback's answer meanwhile
    get = host.send_request("getattr", names["state"], "copy")
    kind, seq, body = host.read_message()
    assert (kind, seq) == (frames.ERROR, running)  # unwound first, not served around
    assert wire.decode(body)[0] == "KeyboardInterrupt"
    copy = host.wait(get)
    assert host.request("call", copy, (), None) == {"unwound": "KeyboardInterrupt"}
    host.send_frame(frames.REPLY, callback, wire.encode_bytes(None))  # late: dropped
    assert host.request("call", names["sleep"], (0.0,), None) == "slept"


def test_ctrl_c_while_julia_answers_a_callback_stops_the_request_after_it(looping) -> None:
    host, names = looping
    running, callback = start_loop(host, names)
    host.proc.send_signal(signal.SIGINT)  # Julia took Ctrl-C just after it answered
    time.sleep(0.3)
    host.send_frame(frames.REPLY, callback, wire.encode_bytes(None))
    host.send_frame(frames.ABANDON, running, b"")
    kind, seq, body = host.read_message()
    assert (kind, seq) == (frames.ERROR, running), (kind, wire.decode(body))
    assert wire.decode(body)[0] == "KeyboardInterrupt"
    assert host.request("call", names["sleep"], (0.0,), None) == "slept"


def test_ctrl_c_for_an_answered_request_does_not_stop_the_next_one(looping) -> None:
    host, names = looping
    answered = host.send_request("call", names["sleep"], (0.0,), None)
    assert host.wait(answered) == "slept"
    interrupt(host, answered)  # Julia took Ctrl-C with the answer already on its way
    assert host.request("call", names["sleep"], (0.5,), None) == "slept"
