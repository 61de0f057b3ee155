"""Random, truncated and oversized frames: the host answers with ERROR frames or exits cleanly.

The property tests run the host loop in a thread of this process on fresh pipes (thousands of
streams in seconds); a few cases run against the real `python -m devplace.bridge` process.
"""

from __future__ import annotations

import os
import struct
import threading

import pytest
from bridge_client import HostProcess
from hypothesis import given, settings
from hypothesis import strategies as st

from devplace.bridge import frames, wire
from devplace.bridge.host import Host

pytestmark = pytest.mark.timeout(300)


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
    if kind != frames.RELEASE:
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


def test_the_real_process_exits_cleanly_when_a_frame_is_cut() -> None:
    h = HostProcess()
    h.send_raw(ECHO[:7])
    assert h.close() == 2
    assert "stream ended inside a frame" in h.stderr and "Traceback" not in h.stderr
