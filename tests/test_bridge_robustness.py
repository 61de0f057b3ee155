"""Random, truncated and oversized frames: the host answers with ERROR frames or exits cleanly.

The property tests run the host loop in a thread of this process on fresh pipes (thousands of
streams in seconds); a few cases run against the real `python -m devplace.bridge` process.
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bridge_client import HostError, HostProcess
from bridge_julia import JuliaScript, gone
from hypothesis import given, settings
from hypothesis import strategies as st

from devplace.bridge import frames, wire
from devplace.bridge.transports.host import Host
from devplace.bridge.wire import JuliaRef

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def run_stream(data: bytes, max_frame: int = 1 << 20) -> tuple[int, list[tuple[int, int, bytes]]]:
    """Feed `data` to a host loop, close the pipe; its exit code and the frames it sent."""
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    result: dict[str, object] = {}

    def serve() -> None:
        try:
            result["code"] = Host(to_r, from_w, max_frame=max_frame).serve_forever()
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            result["error"] = exc
        finally:
            os.close(from_w)

    def feed() -> None:
        try:
            os.write(to_w, data) if data else None
        except BrokenPipeError:
            pass
        finally:
            os.close(to_w)

    threads = [threading.Thread(target=serve), threading.Thread(target=feed)]
    for t in threads:
        t.start()
    out = bytearray()
    while chunk := os.read(from_r, 1 << 16):
        out += chunk
    for t in threads:
        t.join(10)
        assert not t.is_alive(), "host loop did not finish"
    os.close(from_r)
    os.close(to_r)
    assert "error" not in result, result.get("error")
    sent = []
    pos = 0
    while pos < len(out):  # everything the host wrote must be whole, well-formed frames
        (length,) = struct.unpack_from("<I", out, pos)
        kind, seq = struct.unpack_from("<BI", out, pos + 4)
        body = bytes(out[pos + 9 : pos + 4 + length])
        assert len(body) == length - 5, "host wrote a truncated frame"
        assert kind in frames.KINDS
        wire.decode(body)
        sent.append((kind, seq, body))
        pos += 4 + length
    return int(result["code"]), sent  # type: ignore[call-overload]


def frame(kind: int, seq: int, body: bytes) -> bytes:
    return frames.HEADER.pack(5 + len(body), kind, seq) + body


ECHO = frame(frames.REQUEST, 1, bytes([15]) + wire.encode_bytes(("ok",)))


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_random_streams_end_cleanly(data: bytes) -> None:
    code, sent = run_stream(data)
    assert code in (0, 2)
    assert sent[0][0] == frames.HELLO
    assert all(kind in (frames.ERROR, frames.REPLY, frames.RELEASE) for kind, _, _ in sent[1:])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 255), st.integers(0, 2**32 - 1), st.binary(max_size=200))
def test_well_framed_garbage_gets_an_error_reply_and_the_host_goes_on(
    kind: int, seq: int, body: bytes
) -> None:
    code, sent = run_stream(frame(kind, seq, body) + ECHO)
    assert code == 0
    replies = sent[1:]
    assert replies[-1] == (frames.REPLY, 1, wire.encode_bytes("ok"))
    if kind not in (frames.RELEASE, frames.ABANDON):  # neither is answered
        assert len(replies) == 2 and replies[0][:2] in ((frames.ERROR, seq), (frames.REPLY, seq))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, len(ECHO) - 1))
def test_truncated_frames_are_a_clean_exit(cut: int) -> None:
    code, sent = run_stream(ECHO[:cut])
    assert code == 2 and len(sent) == 1


@settings(max_examples=100, deadline=None)
@given(st.integers((1 << 20) + 1, 2**32 - 1))
def test_oversized_frames_are_refused_without_allocating(length: int) -> None:
    code, sent = run_stream(struct.pack("<I", length) + b"\x01" * 100)
    assert code == 2 and len(sent) == 1


def test_short_length_is_refused() -> None:
    code, _ = run_stream(struct.pack("<I", 3) + b"abc")
    assert code == 2


def test_the_real_process_survives_garbage_and_exits_cleanly_on_bad_streams() -> None:
    h = HostProcess("--max-frame", "4096")
    h.send_frame(frames.REQUEST, 5, b"\xff\xff")
    kind, seq, body = h.read_frame()
    assert (kind, seq) == (frames.ERROR, 5) and "unknown opcode 255" in wire.decode(body)[1]
    assert h.request("echo", [1, "x"]) == [1, "x"]
    h.send_raw(struct.pack("<I", 10**9))  # oversized: refused at once, before any data
    assert h.close() == 2
    assert "exceeds the limit of 4096" in h.stderr and "Traceback" not in h.stderr


def test_a_frame_length_above_the_stated_limit_is_refused_at_once() -> None:
    h = HostProcess()
    assert h.request("echo", 1) == 1
    h.send_raw(struct.pack("<I", 2**32 - 1))  # 4 GiB claimed; nothing follows, the pipe stays open
    assert h.proc.wait(60) == 2  # refused at once: no wait for a body that never comes
    assert h.close() == 2
    limit = frames.DEFAULT_MAX_FRAME
    assert limit == 2**31 and f"exceeds the limit of {limit}" in h.stderr, h.stderr
    assert "Traceback" not in h.stderr


def test_the_real_process_exits_cleanly_when_a_frame_is_cut() -> None:
    h = HostProcess()
    h.send_raw(ECHO[:7])
    assert h.close() == 2
    assert "stream ended inside a frame" in h.stderr and "Traceback" not in h.stderr


# --- nested callbacks, errors inside them and releases, interleaved ---------------------------

#: A plan a client-side "Julia" function runs: "make" an object, "release" the last one made,
#: "fail" (raise), or a nested plan (call back into Python, which runs it as a callback).
plans = st.recursive(
    st.lists(st.sampled_from(["make", "release", "fail"]), max_size=4),
    lambda inner: st.lists(st.sampled_from(["make", "release", "fail"]) | inner, max_size=4),
    max_leaves=25,
)


def expected(plan: list[Any]) -> list[Any]:
    """What running `plan` returns (or raises), computed without the host."""
    out: list[Any] = []
    for step in plan:
        if step == "fail":
            raise ValueError("planned failure")
        if isinstance(step, list):
            try:
                out.append(expected(step))
            except ValueError:
                out.append("error: ValueError: planned failure")  # as JuliaError
        else:
            out.append(step)
    return out


@pytest.fixture(scope="module")
def nesting_host() -> Iterator[HostProcess]:
    h = HostProcess()
    yield h
    assert h.close() == 0


@settings(max_examples=150, deadline=None)
@given(plans)
def test_nested_callbacks_errors_and_releases_interleave(
    nesting_host: HostProcess, plan: list[Any]
) -> None:
    host = nesting_host
    baseline = host.request("stats")
    object_ = host.request("builtin", "object")
    list_ = host.request("builtin", "list")
    map_ = host.request("builtin", "map")
    made: list[Any] = []

    def run(plan: list[Any]) -> list[Any]:
        out: list[Any] = []
        for step in plan:
            if step == "make":
                made.append(host.request("call", object_, (), None))
            elif step == "release" and made:
                host.release([made.pop().id])  # mid-callback, between requests
            elif step == "fail":
                raise ValueError("planned failure")
            if isinstance(step, list):
                mapped = host.request("call", map_, (JuliaRef(20, "run"), [step]), None)
                try:
                    out.append(host.request("call", list_, (mapped,), None)[0])
                except HostError as err:
                    out.append(f"error: {err.message}")
                host.release([mapped.id])
            else:
                out.append(step)
        return out

    host.callbacks[20] = run
    try:
        want = expected(plan)
    except ValueError:
        with pytest.raises(ValueError):
            run(plan)
    else:
        assert run(plan) == want
    gc = host.request("import", "gc")
    collect = host.request("getattr", gc, "collect")
    host.release([h.id for h in made] + [object_.id, list_.id, map_.id])
    host.request("call", collect, (), None)  # proxies kept alive by tracebacks' cycles
    host.release([gc.id, collect.id])
    host.request("stats")  # carries the host's releases of the Julia functions
    after = host.request("stats")
    assert after["julia_functions"] == baseline["julia_functions"]
    assert after["handles"] == baseline["handles"]


# --- the real Julia process: Ctrl-C and death ---------------------------------------------------


INTERRUPTED = """
x = constant(2.0)
v = Variable(5.0)
sess = Session()
init(sess)
# Each long call says RUNNING (on stderr) once it runs in the host, so the Ctrl-C lands mid-call.
sleepy = pybuiltin("eval")("lambda s: print('RUNNING', file=__import__('sys').stderr, " *
                           "flush=True) or __import__('time').sleep(s) or s")
slow_op = tf.py_func(sleepy, [constant(8.0)], tf.float64)
# Pure TF: matmuls in a while loop for 10 s by TF's clock (as long on any machine), the host's
# main thread inside Session.run all the while.
spin = pybuiltin("eval")("lambda tf, t: tf.while_loop(lambda a: tf.timestamp() < t, " *
                         "lambda a: tf.tanh(tf.matmul(a, a)), [tf.fill((200, 200), 0.001)])")
slow_loop = @pywith tf.device("/cpu:0") begin
    control_dependencies(() -> spin(tf, tf.timestamp() + 10.0), [tf.print("RUNNING")])
end
pylist, pymap = pybuiltin("list"), pybuiltin("map")
pid = DevPlace.host_pid()
run(sess, x)  # compiled before the Ctrl-C: a Ctrl-C while Julia compiles is Julia's business
for what in ARGS
    println("READY"); flush(stdout)
    r = try
        what == "python" ? sleepy(100) :
        what == "py_func" ? run(sess, slow_op) :
        what == "while_loop" ? run(sess, slow_loop) :
        what == "callback" ? pylist(pymap(_ -> sleepy(100), [1])) :  # Ctrl-C two calls deep
        pylist(pymap(_ -> run(sess, slow_loop), [1]))  # two calls deep, in a TF run
        "finished"
    catch e
        e
    end
    println("INTERRUPTED ", r isa InterruptException); flush(stdout)
    println("NEXT ", run(sess, x * 3.0), " ", run(sess, v), " ", DevPlace.host_pid() == pid)
    flush(stdout)
end
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals to a child: Linux")
@pytest.mark.parametrize(
    "case", ["python", "py_func", "while_loop", "callback", "callback_while_loop"]
)
def test_ctrl_c_interrupts_a_call_and_keeps_the_host_and_the_graph(
    tmp_path: Path, case: str
) -> None:
    # Then a second Ctrl-C in the same session, during a Python call.
    julia = JuliaScript(INTERRUPTED, tmp_path, case, "python")
    for _ in range(2):
        julia.expect("READY")
        julia.expect("RUNNING")  # the host is inside the long call
        julia.proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        assert julia.expect("INTERRUPTED ", timeout=60) == "true", case
        # The signal wakes Julia's wait at once; slack for a loaded machine, not a benchmark.
        assert time.monotonic() - sent < 5
        # Same host, graph, session and variable; the abandoned run finished first.
        assert julia.expect("NEXT ", timeout=180) == "6.0 5.0 true"
    assert julia.finish() == 0


ORPHAN = """
println("HOST ", DevPlace.host_pid()); flush(stdout)
pyimport("time").sleep(100)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc: Linux")
def test_the_host_dies_with_a_killed_julia_during_a_call(tmp_path: Path) -> None:
    julia = JuliaScript(ORPHAN, tmp_path)
    host_pid = int(julia.expect("HOST "))
    time.sleep(0.5)  # the host is inside its 100 s call
    julia.proc.kill()
    julia.finish()
    deadline = time.monotonic() + 10  # a bound far below the call, not a benchmark
    while not gone(host_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(host_pid), f"host {host_pid} outlived its Julia parent"


def test_the_host_exits_when_its_parent_pid_is_gone() -> None:
    host = subprocess.Popen(  # the watchdog's check, which works on any system
        [sys.executable, "-m", "devplace.bridge", "--parent-pid", "999999999"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    try:
        assert host.wait(30) == 3
    finally:
        host.kill()
        host.wait()
        assert host.stdin is not None
        host.stdin.close()


PRESTART = """
sleep(2)  # as the REPL waiting for input: the task `using` scheduled starts the host now
h = DevPlace.HOST[]
println("STARTED ", h !== nothing && process_running(h.proc))
println("FIRST ", run(Session(), constant(2.0) * 3.0), " ", DevPlace.HOST[] === h)
"""


def test_using_starts_the_host_in_the_background_and_the_first_call_uses_it(
    tmp_path: Path,
) -> None:
    julia = JuliaScript(PRESTART, tmp_path)
    assert julia.expect("STARTED ") == "true"
    assert julia.expect("FIRST ") == "6.0 true"
    assert julia.finish() == 0


PRESTART_INPROCESS = """
ticks = Ref(0)  # another task, as the REPL's: it runs while TensorFlow loads and Julia compiles
ticker = @async while DevPlace.HOST[] === nothing
    ticks[] += 1
    sleep(0.05)
end
t = time()
while DevPlace.HOST[] === nothing && time() - t < 90
    sleep(0.1)
end
h = DevPlace.HOST[]
println("STARTED ", h isa DevPlace.Transports.InProcess, " ticks ", ticks[] > 1)
println("FIRST ", run(Session(), constant(2.0) * 3.0), " ", DevPlace.HOST[] === h)
"""


def test_in_process_using_loads_tensorflow_in_the_background_and_other_tasks_run_meanwhile(
    tmp_path: Path,
) -> None:
    """In process the background task starts Python, compiles the bridge while TensorFlow
    loads on Python's thread (yielding between methods), and starts the peer once it has
    loaded: the first call finds it, and other tasks ran all along."""
    julia = JuliaScript(PRESTART_INPROCESS, tmp_path, transport="inprocess")
    assert julia.expect("STARTED ") == "true ticks true"
    assert julia.expect("FIRST ") == "6.0 true"
    assert julia.finish() == 0
