"""The Python codec against the shared wire-format vectors (tests/vectors, docs/protocol.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge_vectors import python_value, rows, same

from devplace.bridge import frames, requests
from devplace.bridge.wire import decode, encode_bytes

VALUES = rows("values.tsv")
FRAMES = rows("frames.tsv")


def test_vector_files_are_well_formed() -> None:
    assert len(VALUES) >= 30 and len(FRAMES) >= 6
    assert all(len(r) == 5 for r in VALUES + FRAMES)


@pytest.mark.parametrize("name,hexbytes,_jl,py,checks", VALUES, ids=[r[0] for r in VALUES])
def test_value_vector(name: str, hexbytes: str, _jl: str, py: str, checks: str) -> None:
    expected = python_value(py)
    data = bytes.fromhex(hexbytes)
    if "pe" in checks.split(","):
        assert encode_bytes(expected).hex() == hexbytes
    if "pd" in checks.split(","):
        got = decode(data)
        assert same(got, expected), (got, expected)


@pytest.mark.parametrize("name,hexbytes,kind,seq,body", FRAMES, ids=[r[0] for r in FRAMES])
def test_frame_vector(name: str, hexbytes: str, kind: str, seq: str, body: str) -> None:
    data = bytes.fromhex(hexbytes)
    length, k, s = frames.HEADER.unpack_from(data)
    assert (length, k, s) == (len(data) - 4, int(kind), int(seq))
    assert data[9:].hex() == body
    assert frames.HEADER.pack(5 + len(body) // 2, int(kind), int(seq)).hex() + body == hexbytes
    decode(bytes.fromhex(body)[1:] if int(kind) == frames.REQUEST else bytes.fromhex(body))


def test_the_opcode_table_is_one_file_shown_in_the_protocol_page() -> None:
    table = (Path(requests.__file__).parent / "opcodes.tsv").read_text(encoding="utf-8")
    rows = [line.split("\t") for line in table.splitlines() if line and not line.startswith("#")]
    assert {int(r[0]): r[1] for r in rows} == requests.OPCODES
    assert {name for _, (name, _) in requests.OPERATIONS.items()} == set(requests.CODES)
    page = (Path(__file__).parent.parent / "docs" / "protocol.md").read_text(encoding="utf-8")
    shown = page.split("| op | name | arguments | result |\n|---|---|---|---|\n", 1)[1]
    shown_rows = [line for line in shown.split("\n\n", 1)[0].splitlines()]
    assert shown_rows == [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} |" for r in rows]
