"""Large arrays between DevPlace.jl and its host through shared memory (docs/protocol.md, "Shared
memory"), and every way it can fail: no segment folder, a read-only one, Docker's 64 MB one, an
array larger than the free space, the host or Julia killed, Ctrl-C during a transfer. Each
case checks the values, what was said, and that no segment is left behind."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from bridge_julia import JuliaScript, gone

from devplace.bridge.transports import shm

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="/dev/shm, signals, mount namespaces: Linux"
)

SAID = "large arrays go through the pipe instead of shared memory"

# Prints, for the test to check: each transfer's result, and the outboxes of this Julia and of
# its host (`devplace-<pid>-<n>` in the segment folder) while they run.
PRELUDE = """
const D = DevPlace
echo(x) = D.request(D.OP_ECHO, (x,))
boxes(pid) = isdir(D.SHM_DIR[]) ?
             filter(f -> startswith(f, "devplace-$pid-"), readdir(D.SHM_DIR[])) : String[]
A = rand(1 << 20)  # 8 MiB
show_pids() = (println("PIDS ", getpid(), " ", D.host_pid()); flush(stdout))
"""

TRANSFERS = (
    PRELUDE
    + """
println("ECHO ", echo(A) == A)
println("OUTBOXES ", length(boxes(getpid())), " ", length(boxes(D.host_pid())))
np = pyimport("numpy")
println("SUM ", np.sum(A) ≈ sum(A))
M = rand(Float32, 600, 500)
V = @view M[1:2:end, 2:3:end]  # not contiguous in Julia
println("VIEW ", echo(V) == V)
# Not contiguous in Python: a transposed, strided array.
strided = pybuiltin("eval")("lambda n: __import__('numpy').arange(n * n * 1.0)" *
                            ".reshape(n, n).T[::2]")
n = 600
println("STRIDED ", strided(n) == [(j - 1) * n + 2 * (k - 1) for k in 1:n ÷ 2, j in 1:n])
println("ZERO ", echo(zeros(0)) == zeros(0), " ", size(echo(zeros(0, 5))) == (0, 5))
r = try echo(fill("a", 600, 500)) catch e e end
println("NONNUMERIC ", r isa ArgumentError && occursin("only numeric arrays", r.msg))
objects = pybuiltin("eval")("lambda: __import__('numpy').array(['x'] * 300000, dtype=object)")
println("OBJECTS ", objects() isa PyObject)
println("SEVERAL ", echo((A, 2 .* A, Float32.(A))) == (A, 2 .* A, Float32.(A)))
Big = rand(100 << 17)  # 100 MiB: both outboxes grow
println("BIG ", echo(Big) == Big, " ", echo(A) == A)
println("REUSED ", all(echo(A .+ i) == A .+ i for i in 1:5))
sess = Session()
println("RUN ", run(sess, constant(A)) == A)
show_pids()
"""
)


def leftovers(folder: str, *pids: int) -> list[str]:
    """Segments of these processes still in `folder`."""
    return [f for f in os.listdir(folder) if any(f.startswith(f"devplace-{p}-") for p in pids)]


@pytest.mark.slow
def test_arrays_cross_through_shared_memory_both_ways_and_leave_nothing(tmp_path: Path) -> None:
    julia = JuliaScript(TRANSFERS, tmp_path)
    assert julia.expect("ECHO ") == "true"
    assert julia.expect("OUTBOXES ") == "1 1"  # the array went through both outboxes
    for line in ("SUM", "VIEW", "STRIDED", "ZERO", "NONNUMERIC", "OBJECTS", "SEVERAL", "BIG"):
        assert set(julia.expect(line + " ", timeout=300).split()) == {"true"}, line
    assert julia.expect("REUSED ") == julia.expect("RUN ") == "true"
    pids = [int(p) for p in julia.expect("PIDS ").split()]
    assert julia.finish() == 0, julia.output()
    assert SAID not in julia.output()
    assert leftovers("/dev/shm", *pids) == []


IN_PLACE = (
    PRELUDE
    + """
owns = pybuiltin("eval")("lambda a: bool(a.flags.owndata)")
println("COPIED ", owns(A), " ", D.request(D.OP_CALL | D.IN_PLACE, (owns, (A,))))
# Ops run in the caller's thread, the host's main one: Julia functions can be called mid-run.
sess = tf.Session(config = tf.ConfigProto(inter_op_parallelism_threads = -1))
p = placeholder(Float64; shape = [length(A)])
# Julia functions TensorFlow calls during the run: their answers go through Julia's outbox too,
# the second one so big that the outbox grows (the host maps it anew) while the feed is read.
y = tf.py_func(x -> 2 .* x, [p], tf.float64)
z = tf.py_func(x -> vcat(x, zeros(12 << 20)), [p], tf.float64)
read_after = @pywith tf.control_dependencies([y, z]) begin
    [tf.identity(p), sum(p)]
end
r = run(sess, [y, z, read_after...], p => A)
println("RUN ", r[1] == 2 .* A, " ", r[2][1:length(A)] == A, " ", r[3] == A, " ", r[4] ≈ sum(A))
println("AGAIN ", run(sess, sum(p), p => A .+ 1) ≈ sum(A .+ 1), " ", echo(A) == A)
show_pids()
"""
)


@pytest.mark.slow
def test_run_reads_feeds_in_place_and_callbacks_during_the_run_leave_them_alone(
    tmp_path: Path,
) -> None:
    julia = JuliaScript(IN_PLACE, tmp_path)
    # An IN_PLACE request's array is the outbox's own memory in the host; others are copies.
    assert julia.expect("COPIED ") == "true false"
    # The feed, read after Julia's callbacks answered through the outbox, is still the feed.
    assert julia.expect("RUN ", timeout=300) == "true true true true"
    assert julia.expect("AGAIN ") == "true true"
    pids = [int(p) for p in julia.expect("PIDS ").split()]
    assert julia.finish() == 0, julia.output()
    assert leftovers("/dev/shm", *pids) == []


BEHIND = (
    PRELUDE
    + """
# An array its writer has written half of: Julia copies what is written, then waits (`stalled`)
# and never returns part of it; written whole, it comes back whole.
n = 1 << 20
path = joinpath(D.SHM_DIR[], "devplace-$(getpid())-99")
seg = open(path, "w+")
D.lock_segment(Cint(fd(seg)))  # as its owner does: a cleaner leaves it alone
write(seg, zeros(UInt8, 48), UInt64(n * 4), UInt64(7), collect(1.0:n))
flush(seg)
stalls = Ref(0)
r = try
    D.read_shared(Float64, (n,), path, UInt64(64), UInt64(7),
                  () -> (stalls[] += 1) > 100 && error("stalled"))
catch e
    e
end
println("HALF ", r isa ErrorException && r.msg == "stalled", " ", stalls[])
seek(seg, 48); write(seg, UInt64(n * 8)); flush(seg)
println("WHOLE ", D.read_shared(Float64, (n,), path, UInt64(64), UInt64(7),
                                () -> error("nothing to wait for")) == 1.0:n)
close(seg); rm(path)
# A host that dies while it writes: the wait says so instead of spinning on.
h = D.host()
show_pids()
kill(h.proc, Base.SIGKILL)
timedwait(() -> process_exited(h.proc), 10.0)
e = try D.writing_stalled(h)() catch e e end
println("DEAD ", e isa D.HostError && occursin("killed by signal 9 while writing an array", e.msg))
println("AGAIN ", echo(A) == A)
"""
)


@pytest.mark.slow
def test_arrays_are_copied_out_behind_their_writer_who_may_die(tmp_path: Path) -> None:
    julia = JuliaScript(BEHIND, tmp_path)
    assert julia.expect("HALF ") == "true 101"
    assert julia.expect("WHOLE ") == "true"
    pids = [int(p) for p in julia.expect("PIDS ").split()]
    assert julia.expect("DEAD ") == "true"
    assert julia.expect("AGAIN ") == "true"  # the next call starts a fresh host
    assert julia.finish() == 0, julia.output()
    assert leftovers("/dev/shm", *pids) == []


FALLBACK = (
    PRELUDE
    + """
println("ECHO ", echo(A) == A, " ", echo(A) == A)
Big = rand(100 << 17)
println("BIG ", echo(Big) == Big, " ", echo(A) == A)
println("OUTBOXES ", length(boxes(getpid())), " ", length(boxes(D.host_pid())))
show_pids()
"""
)


@pytest.mark.slow
def test_without_a_segment_folder_arrays_go_through_the_pipe_said_once(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    julia = JuliaScript(FALLBACK, tmp_path, env={"DEVPLACE_SHM_DIR": str(missing)})
    assert julia.expect("ECHO ") == "true true"
    assert julia.expect("BIG ", timeout=300) == "true true"
    assert julia.finish() == 0, julia.output()
    lines = [line for line in julia.seen if SAID in line]
    # Once from Julia (its feeds), once from the host (its answers), each naming the reason.
    assert len(lines) == 2, julia.output()
    assert all("No such file or directory" in line and str(missing) in line for line in lines)


def _small_dev_shm(options: str) -> tuple[str, ...]:
    """Run the command with /dev/shm a fresh tmpfs mounted with `options`, in a private mount
    namespace (nothing outside it sees the mount)."""
    mount = f'mount -t tmpfs -o {options} tmpfs /dev/shm && exec "$@"'
    return ("unshare", "--mount", "--propagation", "private", "sh", "-c", mount, "sh")


def require_to_work(command: tuple[str, ...], what: str) -> None:
    """Skip unless `command` succeeds here (`what` it needs); under CI=true fail instead."""
    try:
        done = subprocess.run(command, capture_output=True, timeout=30)
        why = "" if done.returncode == 0 else done.stderr.decode(errors="replace").strip()
    except (OSError, subprocess.TimeoutExpired) as err:
        why = str(err)
    if why:
        message = f"{what}: {why}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (CI=true: this test must run)")
        pytest.skip(message)


@pytest.mark.slow
@pytest.mark.parametrize(
    "options,outboxes,why",
    [
        # Read-only: nothing can be made, every array takes the pipe.
        ("ro,size=64m", "0 0", "Read-only file system"),
        # Docker's default: 8 MiB goes through it; 100 MiB, larger than the free space, takes
        # the pipe, and 8 MiB fits again after it.
        ("size=64m", "1 1", "No space left on device"),
    ],
)
def test_a_read_only_or_small_dev_shm_sends_what_does_not_fit_through_the_pipe(
    tmp_path: Path, options: str, outboxes: str, why: str
) -> None:
    require_to_work((*_small_dev_shm("size=1m"), "true"), "a private /dev/shm needs root, mount(8)")
    julia = JuliaScript(FALLBACK, tmp_path, wrap=_small_dev_shm(options))
    assert julia.expect("ECHO ") == "true true"
    assert julia.expect("BIG ", timeout=300) == "true true"
    assert julia.expect("OUTBOXES ") == outboxes
    assert julia.finish() == 0, julia.output()
    lines = [line for line in julia.seen if SAID in line]
    assert len(lines) == 2 and all(why in line for line in lines), lines  # once per side


KILLED = (
    PRELUDE
    + """
echo(A)  # both outboxes exist
dead = D.host_pid()
die = pybuiltin("eval")("lambda a: __import__('os').kill(__import__('os').getpid(), 9)")
r = try die(A) catch e e end
println("KILLED ", r isa HostError, " ", dead)
println("NEXT ", echo(A) == A)  # a fresh host; its start deleted the dead host's outbox
show_pids()
sleep(600)
"""
)

AFTER = PRELUDE + 'println("ECHO ", echo(A) == A)\nshow_pids()\n'


@pytest.mark.slow
def test_segments_of_killed_processes_are_deleted_by_the_next_start(tmp_path: Path) -> None:
    julia = JuliaScript(KILLED, tmp_path / "first")
    killed, dead_host = julia.expect("KILLED ", timeout=300).split()
    assert killed == "true"
    assert julia.expect("NEXT ") == "true"
    assert leftovers("/dev/shm", int(dead_host)) == []
    julia_pid, host_pid = (int(p) for p in julia.expect("PIDS ").split())
    julia.proc.kill()  # Julia killed mid-session: its outbox stays; its host exits after it
    julia.finish()
    deadline = time.monotonic() + 10
    while not gone(host_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = leftovers("/dev/shm", julia_pid, host_pid)
    assert f"devplace-{julia_pid}-1" in left
    # The host removes its own outbox when it sees Julia gone, unless it dies before it can.
    assert set(left) <= {f"devplace-{julia_pid}-1", f"devplace-{host_pid}-1"}
    again = JuliaScript(AFTER, tmp_path / "second")
    assert again.expect("ECHO ", timeout=300) == "true"
    pids = [int(p) for p in again.expect("PIDS ").split()]
    assert again.finish() == 0, again.output()
    assert leftovers("/dev/shm", julia_pid, host_pid, *pids) == []


KILLED_THEN_EXIT = (
    PRELUDE
    + """
echo(A)  # both outboxes exist
show_pids()
h = D.host()
if ARGS[1] == "mid-request"
    die = pybuiltin("eval")("lambda a: __import__('os').kill(__import__('os').getpid(), 9)")
    r = try die(A) catch e e end
    println("KILLED ", r isa HostError)
else  # while Julia waits for nothing: only its exit is left to tidy up
    kill(h.proc, Base.SIGKILL)
    println("KILLED ", timedwait(() -> process_exited(h.proc), 10.0) == :ok)
end
"""
)


@pytest.mark.slow
@pytest.mark.parametrize("when", ["mid-request", "idle"])
def test_julia_exiting_after_its_host_was_killed_deletes_the_hosts_outbox(
    tmp_path: Path, when: str
) -> None:
    julia = JuliaScript(KILLED_THEN_EXIT, tmp_path, when)
    julia_pid, host_pid = (int(p) for p in julia.expect("PIDS ", timeout=300).split())
    assert len(leftovers("/dev/shm", host_pid)) == 1
    assert julia.expect("KILLED ", timeout=120) == "true"
    assert julia.finish() == 0, julia.output()
    assert leftovers("/dev/shm", julia_pid, host_pid) == []


# A session that waits, between two rounds of transfers, until the file ARGS[1] exists.
WAITING = (
    PRELUDE
    + """
echo(A)
show_pids()
timedwait(() -> isfile(ARGS[1]), 600.0; pollint = 0.1)
Big = rand(100 << 17)  # both outboxes grow: each side opens the other's again
println("AFTER ", echo(A) == A, " ", echo(Big) == Big)
D.stop_host()
println("FRESH ", echo(A) == A, " ", echo(Big) == Big)
show_pids()
"""
)


def in_pid_namespace(forks: int) -> tuple[str, ...]:
    """Run the command in a PID namespace of its own (as in a Docker container), after `forks`
    processes used up the first ids there."""
    loop = f'for i in $(seq {forks}); do /bin/true; done; "$@"'
    return ("unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", loop, "sh")


@pytest.mark.slow
def test_sessions_in_other_pid_namespaces_keep_their_outboxes(tmp_path: Path) -> None:
    require_to_work((*in_pid_namespace(1), "true"), "PID namespaces need root and unshare(1)")
    go = tmp_path / "go"
    first = JuliaScript(WAITING, tmp_path / "first", str(go), wrap=in_pid_namespace(40))
    pids = [int(p) for p in first.expect("PIDS ", timeout=300).split()]
    boxes = leftovers("/dev/shm", *pids)
    assert len(boxes) == 2, boxes
    # A second session starts, whose start deletes the outboxes of processes that are gone. In
    # its namespace the first one's Julia id is a process that exited, and its own Julia likely
    # has the first one's host id (the same forks before it), so it must take other names too.
    forks = 40 + pids[1] - pids[0]
    second = JuliaScript(AFTER, tmp_path / "second", wrap=in_pid_namespace(forks))
    assert second.expect("ECHO ", timeout=300) == "true"
    second_pids = [int(p) for p in second.expect("PIDS ").split()]
    assert second.finish() == 0, second.output()
    assert SAID not in second.output()  # it found names of its own
    assert set(boxes) <= set(leftovers("/dev/shm", *pids)), "the live session's outboxes went"
    # Outboxes deleted anyway (by an older cleaner, by hand): each side makes a new one.
    for name in boxes:
        os.unlink(os.path.join("/dev/shm", name))
    go.touch()
    assert first.expect("AFTER ", timeout=300) == "true true"
    assert first.expect("FRESH ", timeout=300) == "true true"
    pids += [int(p) for p in first.expect("PIDS ").split()]
    assert first.finish() == 0, first.output()
    assert SAID not in first.output()
    assert leftovers("/dev/shm", *pids, *second_pids) == []


INTERRUPTED = (
    PRELUDE
    + """
Big = rand(100 << 17)
sleepy = pybuiltin("eval")("lambda a, s: print('RUNNING', file=__import__('sys').stderr, " *
                           "flush=True) or __import__('time').sleep(s) or a.sum()")
echo(A)
println("READY"); flush(stdout)
r = try sleepy(Big, 100) catch e e end
println("INTERRUPTED ", r isa InterruptException)
println("NEXT ", echo(A) == A, " ", sleepy(Big, 0) ≈ sum(Big), " ", echo(Big) == Big)
show_pids()
"""
)


@pytest.mark.slow
def test_ctrl_c_during_a_transfer_keeps_the_data_and_leaves_nothing(tmp_path: Path) -> None:
    julia = JuliaScript(INTERRUPTED, tmp_path)
    julia.expect("READY", timeout=300)
    julia.expect("RUNNING", timeout=120)  # the host has the 100 MiB array, inside the call
    julia.proc.send_signal(signal.SIGINT)
    assert julia.expect("INTERRUPTED ", timeout=60) == "true"
    assert julia.expect("NEXT ", timeout=300) == "true true true"
    pids = [int(p) for p in julia.expect("PIDS ").split()]
    assert julia.finish() == 0, julia.output()
    assert leftovers("/dev/shm", *pids) == []


# --- the Python end on its own ------------------------------------------------------------------


def test_an_outbox_array_is_copied_out_intact_and_an_overwritten_one_is_refused(
    tmp_path: Path,
) -> None:
    box = shm.Outbox(str(tmp_path), 1)
    inbox = shm.Inbox()
    a = np.arange(12.0).reshape(3, 4)  # C order: written column-major
    path, offset, stamp = box.write(a, a.dtype) or ("", 0, 0)
    b = box.write(a.T, a.dtype)  # same message: after the first
    assert b is not None and b[1] > offset
    with pytest.raises(shm.SegmentError, match="not written whole"):
        inbox.read(a.dtype, a.shape, path, offset, stamp)  # placed, written once it is sent
    box.fill()
    got = inbox.read(a.dtype, a.shape, path, offset, stamp)
    assert np.array_equal(got, a) and np.array_equal(inbox.read(a.dtype, (4, 3), *b), a.T)
    box.start_message()
    box.write(a + 1, a.dtype)  # the next message reuses the space
    box.fill()
    with pytest.raises(shm.SegmentError, match="overwritten"):
        inbox.read(a.dtype, a.shape, path, offset, stamp)
    assert np.array_equal(got, a)  # what was read is a copy
    box.close()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "a",
    [
        np.arange(100_000.0),  # 1-D
        np.arange(60_000.0).reshape(200, 300),  # C order: written column-major
        np.asfortranarray(np.arange(24_000.0).reshape(20, 30, 40)),
        np.arange(200_000, dtype=">i4")[::2],  # strided, big-endian: converted while written
    ],
)
def test_fill_writes_each_array_in_chunks_and_says_how_much_is_written(
    tmp_path: Path, a: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shm, "CHUNK", 4096)  # many chunks
    box = shm.Outbox(str(tmp_path), 1)
    dtype = a.dtype.newbyteorder("<")
    path, offset, stamp = box.write(a, dtype) or ("", 0, 0)
    head = np.memmap(path, np.uint64, mode="r", offset=offset - 16, shape=(2,))
    assert list(head) == [0, stamp] and box.pending()  # placed: nothing written yet
    seen: list[int] = []
    pack = shm._STAMP.pack_into

    def record(buffer: object, at: int, value: int) -> None:
        seen.append(value)
        pack(buffer, at, value)

    monkeypatch.setattr(shm, "_STAMP", type("S", (), {"pack_into": staticmethod(record)}))
    box.fill()
    assert seen == sorted(seen) and len(seen) > 1 and seen[-1] == a.nbytes  # in order, whole
    assert not box.pending()
    monkeypatch.undo()
    assert np.array_equal(shm.Inbox().read(dtype, a.shape, path, offset, stamp), a)
    box.close()


def test_an_array_read_in_place_is_the_outbox_and_outlives_a_remap(tmp_path: Path) -> None:
    box = shm.Outbox(str(tmp_path), 1)
    inbox = shm.Inbox()
    a = np.arange(1000.0)
    path, offset, stamp = box.write(a, a.dtype) or ("", 0, 0)
    box.fill()
    inbox.in_place = True
    view = inbox.read(a.dtype, a.shape, path, offset, stamp)
    assert not view.flags.owndata and not view.flags.writeable
    assert np.array_equal(view, a)
    big = np.arange(1e6)  # the outbox grows, so the inbox maps it again
    grown = box.write(big, big.dtype)
    assert grown is not None
    box.fill()
    assert np.array_equal(inbox.read(big.dtype, big.shape, *grown), big)
    assert np.array_equal(view, a)  # the first mapping stays while the view uses it
    inbox.in_place = False
    assert inbox.read(a.dtype, a.shape, path, offset, stamp).flags.owndata
    del view
    box.close()


def test_shared_array_descriptions_naming_other_files_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "passwd"
    other.write_bytes(bytes(64))
    with pytest.raises(shm.SegmentError, match="not a devplace segment"):
        shm.Inbox().read(np.dtype("<f8"), (2,), str(other), 8, 1)
    short = tmp_path / "devplace-1-1"
    short.write_bytes(bytes(16))
    with pytest.raises(shm.SegmentError, match="holds 16 bytes"):
        shm.Inbox().read(np.dtype("<f8"), (4,), str(short), 64, 1)


def test_an_outbox_is_locked_while_it_lives_and_replaced_when_deleted(tmp_path: Path) -> None:
    taken = tmp_path / f"devplace-{os.getpid()}-1"  # another PID namespace's process of our id
    taken.write_bytes(b"")
    box = shm.Outbox(str(tmp_path), 1)
    a = np.arange(100.0)
    path, offset, stamp = box.write(a, a.dtype) or ("", 0, 0)
    box.fill()
    assert path == str(tmp_path / f"devplace-{os.getpid()}-2")
    fd = os.open(path, os.O_RDONLY)
    try:  # what Julia's cleaner tries: the lock is held, so the owner lives
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
    os.unlink(path)
    box.start_message()
    again = box.write(a, a.dtype)
    assert again is not None and again[0] != path and os.path.exists(again[0])
    box.fill()
    assert np.array_equal(shm.Inbox().read(a.dtype, a.shape, *again), a)
    box.close()
    assert sorted(os.listdir(tmp_path)) == [taken.name]
