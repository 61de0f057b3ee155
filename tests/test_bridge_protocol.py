"""One protocol table for both languages: the bridge's Python constants are protocol.tsv's
(DevPlace.jl's are checked against the same file by julia/DevPlace/test/layering.jl)."""

from pathlib import Path

from devplace.bridge import frames, graph_ops, protocol, requests, wire
from devplace.bridge.transports import host, shm

TABLE = Path(protocol.__file__).with_name("protocol.tsv")


def rows(group: str) -> dict[str, str]:
    lines = TABLE.read_text(encoding="utf-8").splitlines()
    fields = [line.split("\t") for line in lines if line and not line.startswith("#")]
    return {f[1]: f[2] for f in fields if f[0] == group}


def test_every_value_tag_frame_kind_and_flag_is_the_tables():
    for name, value in rows("tag").items():
        assert getattr(wire, name) == int(value, 0), name
    kinds = ("REQUEST", "REPLY", "ERROR", "CALLBACK", "RELEASE", "HELLO", "ABANDON")
    for name in kinds:
        assert getattr(frames, name) == int(rows("frame")[name]), name
    assert frames.KINDS == {int(rows("frame")[k]) for k in kinds}
    assert host.PROTOCOL_VERSION == int(rows("frame")["PROTOCOL_VERSION"])
    assert frames.MIN_LENGTH == int(rows("frame")["HEADER_BYTES"])
    assert requests.BY_HANDLE == 0x80 and requests.IN_PLACE == 0x40
    assert wire.MAX_DEPTH == int(rows("limit")["MAX_DEPTH"])


def test_the_shared_memory_layout_and_segment_names_are_the_tables():
    table = rows("shm")
    assert shm.PREFIX == table["PREFIX"]
    assert protocol.segment_name(4242, 7) == table["EXAMPLE"] == "devplace-4242-7"
    assert shm._STAMP.size == int(table["STAMP_BYTES"])
    assert shm._HEAD == int(table["HEAD_BYTES"]) == 2 * shm._STAMP.size
    assert shm.ALIGN == int(table["ARRAY_ALIGN"])


def test_julias_elementwise_functions_are_the_tables():
    table = TABLE.read_text(encoding="utf-8").splitlines()
    unary = [line.split("\t") for line in table if line.startswith("unary\t")]
    assert set(graph_ops.UNARY) == {row[2] for row in unary}
    assert len(unary) == len({row[1] for row in unary})  # one Julia name each
