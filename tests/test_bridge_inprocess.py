"""The Python end of the in-process transport without Julia: arrays by address both ways, the
answer to a request as Julia reads it, and which runs hand their Julia calls to Julia's thread.
DevPlace.jl's own suite runs the whole transport (test_bridge_julia.py, both transports)."""

from __future__ import annotations

import ast
import ctypes
import subprocess
import sys
import threading
from typing import Any

import numpy as np
import pytest

import devplace as dp
from devplace.bridge import frames, wire
from devplace.bridge.callbacks import JuliaError, JuliaFunction
from devplace.bridge.requests import CODES, IN_PLACE
from devplace.bridge.transports import inprocess, numpy_memory

LIBC = ctypes.CDLL(None)


def no_julia(frame: bytes) -> bytearray:
    raise AssertionError("these tests call no Julia function")


@pytest.fixture
def peer() -> inprocess.InProcess:
    return inprocess.InProcess(no_julia, min_bytes=1 << 16)


def test_large_arrays_go_by_address_in_the_order_numpy_holds_them(peer) -> None:
    fortran = np.asfortranarray(np.arange(48_000.0).reshape(200, 240))
    c_order = np.arange(48_000.0).reshape(200, 240)
    for a, order in ((fortran, 0), (c_order, 1), (np.arange(9000.0), 0)):
        path, address, stamp = peer.share(a, a.dtype)
        assert (path, address, stamp) == ("", a.ctypes.data, order)  # no copy: Julia copies
    strided = c_order[:, ::2]  # neither order: one column-major copy, kept until Julia read it
    path, address, stamp = peer.share(strided, np.dtype("<f4"))
    kept = peer._keep[-1]
    assert (path, stamp, address) == ("", 0, kept.ctypes.data)
    assert kept.dtype == np.dtype("<f4") and np.array_equal(kept, strided)
    assert peer.share(np.arange(10.0), np.dtype("<f8")) is None  # small: by value


def test_arrays_from_julia_are_copied_unless_the_request_is_in_place(peer) -> None:
    julia_memory = np.asfortranarray(np.arange(24.0).reshape(4, 6))
    args = (dtype := np.dtype("<f8"), (4, 6), "", julia_memory.ctypes.data, 0)
    copied = peer.shared_array(*args)
    assert np.array_equal(copied, julia_memory) and not np.shares_memory(copied, julia_memory)
    peer.in_place = True
    view = peer.shared_array(*args)
    assert np.array_equal(view, julia_memory) and np.shares_memory(view, julia_memory)
    peer.in_place = False
    assert peer.shared_array(dtype, (0, 3), "", 0, 0).shape == (0, 3)
    with pytest.raises(wire.DecodeError, match="by address, not from '/dev/shm/x'"):
        peer.shared_array(dtype, (2,), "/dev/shm/x", 64, 7)


def request_body(opcode: int, args: tuple[object, ...]) -> bytearray:
    return bytearray(bytes((opcode,)) + wire.encode_bytes(args))


def test_a_request_is_answered_with_the_arrays_it_points_into(peer) -> None:
    big = np.arange(100_000.0)
    handle = peer.to_handle(big)
    answer, keep, dropped, lent = peer.request(request_body(CODES["echo"], (wire.Handle(handle),)))
    assert answer[0] == frames.REPLY and dropped is None
    assert lent is None  # the handle table holds `big` too: Julia copies it
    shared = wire.decode(memoryview(answer)[1:])  # as Julia sees it: by address
    assert isinstance(shared, wire.SharedArray) and shared.path == "" and shared.shape == big.shape
    assert keep is not None and keep[0] is big and shared.offset == big.ctypes.data
    answer, keep, _, _ = peer.request(request_body(CODES["builtin"], ("no_such_builtin",)))
    assert answer[0] == frames.ERROR and keep is None
    kind, message, _, _ = wire.decode(memoryview(answer)[1:])
    assert kind == "NameError" and "no_such_builtin" in message


def test_in_place_requests_read_julias_memory_where_it_is(peer) -> None:
    julia_memory = np.arange(10_000.0)
    seen = []
    shared = wire.SharedArray(
        julia_memory.dtype, julia_memory.shape, "", julia_memory.ctypes.data, 0
    )
    fn = peer.to_handle(lambda a: seen.append(np.shares_memory(a, julia_memory)) or float(a.sum()))
    call = CODES["call"]
    for opcode, shares in ((call, False), (call | IN_PLACE, True)):
        answer, _, _, _ = peer.request(request_body(opcode, (wire.Handle(fn), (shared,))))
        assert wire.decode(memoryview(answer)[1:]) == julia_memory.sum() and seen[-1] is shares


def test_an_array_nothing_else_refers_to_is_lent_to_julia_until_it_releases_it(peer) -> None:
    make = peer.to_handle(lambda n: np.arange(float(n)))  # a fresh array each call
    answer, keep, _, lent = peer.request(request_body(CODES["call"], (wire.Handle(make), (9000,))))
    (id,) = wire.decode(lent)
    assert keep[0] is peer.handles.get(id)  # held by a handle until Julia's array is collected
    assert wire.decode(memoryview(answer)[1:]).offset == keep[0].ctypes.data
    peer.release(memoryview(wire.encode_bytes([id])))
    assert id not in peer._lent and len(peer.handles) == 1  # only `make` is left
    small = peer.request(request_body(CODES["call"], (wire.Handle(make), (10,))))
    assert small[1] is None and small[3] is None  # by value: nothing to lend


def test_released_julia_functions_travel_with_the_next_answer(peer) -> None:
    f = peer.julia_function(7, "f")
    del f
    _, _, dropped, _ = peer.request(request_body(CODES["echo"], (1,)))
    assert dropped is not None and wire.decode(dropped) == [7]
    assert peer.request(request_body(CODES["echo"], (1,)))[2] is None


def test_a_julia_function_on_another_thread_outside_a_run_is_refused_clearly(peer) -> None:
    f = JuliaFunction(peer, 1, "double")
    raised: list[BaseException] = []

    def call() -> None:
        try:
            f(1.0)
        except BaseException as exc:  # noqa: BLE001 - inspected below
            raised.append(exc)

    t = threading.Thread(target=call)
    t.start()
    t.join(10)
    assert isinstance(raised[0], RuntimeError)
    assert "Julia function double was called on a Python thread other than Julia's" in str(
        raised[0]
    )
    assert "py_func" in str(raised[0])


def test_only_graphs_with_py_func_ops_send_their_runs_through_julias_thread() -> None:
    versions: dict[int, tuple[int, bool]] = {}
    graph = dp.tf.Graph()
    with graph.as_default():
        x = dp.tf.constant([1.0, 2.0])
        assert not inprocess._runs_julia_on_tf_threads(graph, versions)
        dp.tf.py_func(np.negative, [x], dp.tf.float32)
        assert inprocess._runs_julia_on_tf_threads(graph, versions)  # seen as the graph grew


def test_a_run_of_one_fetch_answers_scalars_as_themselves_and_the_rest_as_a_request(peer) -> None:
    tf = dp.tf
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(2.0, dtype=tf.float64)
        fetches = {
            "f64": v * 1.5,
            "i64": tf.constant(7, tf.int64),
            "bool": tf.constant(True),
            "f32": tf.constant(2.5, tf.float32),
            "big": tf.ones([9000], tf.float64),
            "op": v.assign(4.0).op,
        }
        init = tf.compat.v1.global_variables_initializer()
    sess = dp.Session(graph=graph)
    s = peer.to_handle(sess)
    ids = {k: peer.to_handle(t) for k, t in fetches.items()}
    failed = peer.run_fetch(s, ids["f64"])  # before `init`: TensorFlow's error, as `request`'s
    assert isinstance(failed, tuple) and failed[0][0] == frames.ERROR
    assert "FailedPrecondition" in wire.decode(memoryview(failed[0])[1:])[0]
    sess.run(init)
    for key, value in (("f64", 3.0), ("i64", 7), ("bool", True)):
        got = peer.run_fetch(s, ids[key])
        assert got == value and type(got) is type(value)  # Python's own: Julia reads it directly
    answer, _, _, lent = peer.run_fetch(s, ids["f32"])
    assert answer[0] == frames.REPLY and type(wire.decode(memoryview(answer)[1:])) is np.float32
    code, address, shape = peer.run_fetch(s, ids["big"])  # a fetch's array: its memory given
    assert (wire.DTYPE_CODES[code], shape) == (np.dtype("<f8"), (9000,))
    assert np.array_equal(
        np.ctypeslib.as_array((ctypes.c_double * 9000).from_address(address)), np.ones(9000)
    )
    LIBC.free(ctypes.c_void_p(address))  # Julia's array would, when collected
    assert peer.run_fetch(s, ids["op"]) is None
    assert peer.run_fetch(s, ids["f64"]) == 6.0  # the op ran


def test_a_run_of_several_fetches_answers_a_list_of_scalars_or_a_request(peer) -> None:
    tf = dp.tf
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(2.0, dtype=tf.float64)
        step, loss = v.assign_add(1.0).op, v * 1.0
        f32, vec = tf.constant(2.5, tf.float32), tf.ones([3], tf.float64)
        init = tf.compat.v1.global_variables_initializer()
    sess = dp.Session(graph=graph)
    sess.run(init)
    s, ids = peer.to_handle(sess), [peer.to_handle(t) for t in (step, loss, f32, vec)]
    got = peer.run_fetch(s, [ids[0], ids[1]])
    assert type(got) is list and got[0] is None and got[1] in (2.0, 3.0)  # in either order
    assert peer.run_fetch(s, (ids[1], ids[1])) == [3.0, 3.0]  # Julia makes it a tuple
    answer, _, _, _ = peer.run_fetch(s, (ids[1], ids[2]))  # a float32: as `request` answers
    assert answer[0] == frames.REPLY
    got = wire.decode(memoryview(answer)[1:])
    assert got == (3.0, 2.5) and [type(x) for x in got] == [np.float64, np.float32]
    answer, _, _, _ = peer.run_fetch(s, [ids[1], ids[3]])
    got = wire.decode(memoryview(answer)[1:])
    assert type(got) is list and got[0] == 3.0 and got[1].tolist() == [1.0, 1.0, 1.0]


def test_a_run_with_feeds_reads_julias_arrays_where_they_are(peer) -> None:
    tf = dp.tf
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float64, [2, 3])
        k = tf.compat.v1.placeholder(tf.int64, [])
        fetches = {"sum": tf.reduce_sum(x) * tf.cast(k, tf.float64), "col": tf.reduce_sum(x, 0)}
    sess = dp.Session(graph=graph)
    s, px, pk = (peer.to_handle(o) for o in (sess, x, k))
    ids = {key: peer.to_handle(t) for key, t in fetches.items()}
    julias = np.asfortranarray(np.arange(6.0).reshape(2, 3))  # Julia's memory: column-major
    array = (wire.CODE_OF[julias.dtype], julias.ctypes.data, julias.shape)
    assert peer.run_fetch(s, ids["sum"], (px, array, pk, 2)) == 30.0
    answer, _, _, _ = peer.run_fetch(s, ids["col"], (px, array, pk, 2))  # [0 1 2; 3 4 5]
    assert answer[0] == frames.REPLY
    assert wire.decode(memoryview(answer)[1:]).tolist() == [3.0, 5.0, 7.0]
    julias[0, 0] = 100.0  # read where it is, each run
    assert peer.run_fetch(s, ids["sum"], (px, array, pk, 1)) == 115.0
    failed = peer.run_fetch(s, ids["sum"], (px, (12, julias.ctypes.data, (3,)), pk, 1))
    assert failed[0][0] == frames.ERROR  # TensorFlow's shape error, as `request`'s
    assert "Cannot feed value of shape (3,)" in wire.decode(memoryview(failed[0])[1:])[1]


LOADING_FLAG_SCRIPT = """
import ctypes, sys
sys.path.insert(0, sys.argv[1])
import gate
from devplace.bridge.transports import startup
startup.load(["slow", "broken"])
flag = ctypes.c_byte.from_address(startup.loading_flag())
print(flag.value, startup.ready(0.05) is not None)  # importing `slow`: still 1, not ready
gate.open.set()
print(startup.ready(30), flag.value)
"""


@pytest.mark.slow
def test_julia_sees_the_import_end_in_a_byte_it_reads_without_the_gil(tmp_path) -> None:
    # DevPlace.jl waits for the import by reading that byte: asking Python instead waited for
    # the GIL the import holds, up to 0.1 s each time, and made the import give it up
    (tmp_path / "gate.py").write_text("import threading\nopen = threading.Event()\n")
    (tmp_path / "slow.py").write_text("import gate\nassert gate.open.wait(30)\n")
    (tmp_path / "broken.py").write_text("raise ImportError('no such library here')\n")
    out = subprocess.run(
        [sys.executable, "-c", LOADING_FLAG_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    # a failed import ends the wait too (1 -> 0), and `ready` says why in one line
    assert out.stdout.splitlines() == ["1 True", "ImportError: no such library here 0"]


def modules_loaded_by(module: str) -> set[str]:
    """The modules a fresh Python has loaded after importing `module`."""
    code = f"import sys, {module}; print(sorted(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(ast.literal_eval(out.stdout))


@pytest.mark.slow
def test_the_module_julia_imports_first_imports_nothing_heavy() -> None:
    # DevPlace.jl imports it before `load` binds TensorFlow's libraries to themselves (importing
    # TensorFlow there would bind its LLVM to Julia's, which hangs the process), and TensorFlow's
    # import begins once it has loaded: numpy and devplace's own modules load in the background
    first = modules_loaded_by("devplace.bridge.transports.startup")
    assert not {"tensorflow", "numpy", "devplace.bridge.transports.inprocess"} & first
    assert "tensorflow" not in modules_loaded_by("devplace.bridge.transports.inprocess")


def test_a_julia_device_function_is_called_without_messages() -> None:
    calls = []

    def julia_on_op(id: int, op_id: int, op: Any) -> str | bytearray:
        calls.append((id, peer.handles.get(op_id), op))  # Julia reads op.name etc. where asked
        if op.name.startswith("bad"):  # an error comes back as `julia_entry`'s answer
            error = ("DomainError", "no device for bad ops", "", None)
            return bytearray(bytes((frames.ERROR,)) + wire.encode_bytes(error))
        return "/device:CPU:0"

    peer = inprocess.InProcess(no_julia, 1 << 16, julia_on_op)
    fn = peer.julia_function(3, "on_cpu")
    graph = dp.tf.Graph()
    with graph.as_default():
        good, bad = dp.tf.constant(1.0, name="good"), dp.tf.constant(2.0, name="bad")
    assert fn.call_on_op(good.op) == "/device:CPU:0"
    assert calls[-1] == (3, good.op, good.op)
    with pytest.raises(JuliaError, match="DomainError: no device for bad ops"):
        fn.call_on_op(bad.op)


def given(make: Any) -> tuple[int, int, tuple[int, ...]] | None:
    """What `numpy_memory.give` does with the array `make()` returns, held by one variable."""
    a = make()
    return numpy_memory.give(a)


def test_a_fresh_arrays_memory_is_given_whole_and_numpy_forgets_it() -> None:
    for make, dtype in (
        (lambda: np.arange(10.0), np.float64),
        (lambda: np.ones(5, np.float32), np.float32),
        (lambda: np.array([True, False]), np.bool_),
        (lambda: np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)), np.int32),
    ):
        a = make()
        expected = a.copy(order="F")
        code, address, shape = numpy_memory.give(a)
        assert not a.flags.owndata  # freeing `a` leaves the memory alone: it is Julia's now
        assert (wire.DTYPE_CODES[code], shape, address) == (np.dtype(dtype), a.shape, a.ctypes.data)
        del a
        count = expected.size
        memory = (ctypes.c_char * (count * expected.itemsize)).from_address(address)
        kept = np.frombuffer(memory, expected.dtype, count).reshape(expected.shape, order="F")
        assert np.array_equal(kept, expected)
        del kept, memory
        LIBC.free(ctypes.c_void_p(address))  # malloc's memory: what Julia's collector calls


def test_memory_others_use_or_numpy_cannot_give_stays_numpys() -> None:
    base = np.arange(10.0)
    cases = {
        "a view": lambda: base[2:],
        "a strided view": lambda: base[::2],
        "row-major 2-D": lambda: np.arange(6.0).reshape(2, 3),
        "not a wire dtype": lambda: np.array(["a", "b"]),
        "empty": lambda: np.zeros(0),
        "read-only": lambda: np.frombuffer(b"\0" * 16),
        "another's buffer": lambda: np.frombuffer(bytearray(16)),
    }
    for why, make in cases.items():
        assert given(make) is None, why
    held = np.arange(4.0)
    also = held  # a second reference: Julia owning it would free memory Python still reads
    assert numpy_memory.give(held) is None and also.flags.owndata
