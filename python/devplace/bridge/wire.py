"""The value codec of the bridge: tagged values to bytes and back (docs/protocol.md).

Values travel by value when both languages have them (nothing, booleans, integers, floats,
strings, bytes, lists, tuples, dicts, numeric scalars and arrays) and as handles otherwise.
The codec knows nothing about processes: a `Context` turns handles into objects and back.
"""

from __future__ import annotations

import struct
from typing import Any, Protocol

import numpy as np

from devplace.bridge.protocol import LIMITS, TAGS
from devplace.core.errors import Error

__all__ = [
    "CODE_OF",
    "DTYPE_CODES",
    "Context",
    "DecodeError",
    "Encoder",
    "Handle",
    "JuliaRef",
    "PlainContext",
    "SharedArray",
    "decode",
    "encode",
]

# Value tags (one byte each; protocol.tsv says what follows each).
NONE = TAGS["NONE"]
FALSE = TAGS["FALSE"]
TRUE = TAGS["TRUE"]
INT = TAGS["INT"]
FLOAT = TAGS["FLOAT"]
STR = TAGS["STR"]
LIST = TAGS["LIST"]
TUPLE = TAGS["TUPLE"]
DICT = TAGS["DICT"]
BYTES = TAGS["BYTES"]
SCALAR = TAGS["SCALAR"]
NDARRAY = TAGS["NDARRAY"]
HANDLE = TAGS["HANDLE"]
JLFUNC = TAGS["JLFUNC"]
DTYPE = TAGS["DTYPE"]
SHARED = TAGS["SHARED"]

#: dtype code <-> numpy dtype; Julia uses the same numbering (wire.jl).
DTYPE_CODES: dict[int, np.dtype[Any]] = {
    1: np.dtype("bool"),
    2: np.dtype("<i1"),
    3: np.dtype("<i2"),
    4: np.dtype("<i4"),
    5: np.dtype("<i8"),
    6: np.dtype("<u1"),
    7: np.dtype("<u2"),
    8: np.dtype("<u4"),
    9: np.dtype("<u8"),
    10: np.dtype("<f2"),
    11: np.dtype("<f4"),
    12: np.dtype("<f8"),
    13: np.dtype("<c8"),
    14: np.dtype("<c16"),
}
#: numpy dtype -> its code.
CODE_OF: dict[np.dtype[Any], int] = {dt: code for code, dt in DTYPE_CODES.items()}
_CODE_OF_TYPE: dict[type, int] = {dt.type: code for code, dt in DTYPE_CODES.items()}

#: Nesting deeper than this is refused (a forged frame must not exhaust the stack).
MAX_DEPTH = LIMITS["MAX_DEPTH"]

_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_TAG_U32 = struct.Struct("<BI")
_TAG_I64 = struct.Struct("<Bq")
_TAG_F64 = struct.Struct("<Bd")
_TAG_U64 = struct.Struct("<BQ")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class DecodeError(Error, ValueError):
    """Bytes that are not a well-formed value (bad tag, truncated, inconsistent sizes)."""


class Handle:
    """A handle id as the codec sees it when no host is attached (test vectors)."""

    __slots__ = ("id",)

    def __init__(self, id: int) -> None:
        self.id = id

    def __eq__(self, other: object) -> bool:
        return type(other) is Handle and other.id == self.id

    def __hash__(self) -> int:
        return hash(("Handle", self.id))

    def __repr__(self) -> str:
        return f"Handle({self.id})"


class JuliaRef:
    """A Julia callable as the codec sees it when no host is attached (test vectors)."""

    __slots__ = ("id", "name")

    def __init__(self, id: int, name: str) -> None:
        self.id, self.name = id, name

    def __eq__(self, other: object) -> bool:
        return type(other) is JuliaRef and (other.id, other.name) == (self.id, self.name)

    def __hash__(self) -> int:
        return hash(("JuliaRef", self.id, self.name))

    def __repr__(self) -> str:
        return f"JuliaRef({self.id}, {self.name!r})"


class SharedArray:
    """An array in a peer's shared-memory outbox as the codec sees it without a host (test
    vectors): dtype, shape, the outbox's path, the array's offset in it and its stamp."""

    __slots__ = ("dtype", "shape", "path", "offset", "stamp")

    def __init__(
        self, dtype: Any, shape: tuple[int, ...], path: str, offset: int, stamp: int
    ) -> None:
        self.dtype, self.shape, self.path = np.dtype(dtype), tuple(shape), path
        self.offset, self.stamp = offset, stamp

    def _key(self) -> tuple[Any, ...]:
        return (self.dtype, self.shape, self.path, self.offset, self.stamp)

    def __eq__(self, other: object) -> bool:
        return type(other) is SharedArray and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(("SharedArray", *self._key()))

    def __repr__(self) -> str:
        return "SharedArray({}, {}, {!r}, {}, {})".format(*self._key())


class Context(Protocol):
    """What the codec asks of its user: handles for objects, objects for handles, and shared
    memory for large arrays."""

    def to_handle(self, obj: Any) -> int: ...

    def from_handle(self, id: int) -> Any: ...

    def julia_function(self, id: int, name: str) -> Any: ...

    def julia_id(self, obj: Any) -> int | None: ...

    def share(self, a: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> tuple[str, int, int] | None:
        """`a` copied as `dtype` into shared memory: (path, offset, stamp); or None: send it
        by value."""
        ...

    def shared_array(
        self, dtype: np.dtype[Any], shape: tuple[int, ...], path: str, offset: int, stamp: int
    ) -> Any: ...


class PlainContext:
    """A context without a host: `Handle` and `JuliaRef` stand for remote objects."""

    def to_handle(self, obj: Any) -> int:
        if type(obj) is Handle:
            return obj.id
        raise TypeError(f"cannot encode {type(obj).__name__} without a host")

    def from_handle(self, id: int) -> Any:
        return Handle(id)

    def julia_function(self, id: int, name: str) -> Any:
        return JuliaRef(id, name)

    def julia_id(self, obj: Any) -> int | None:
        return obj.id if type(obj) is JuliaRef else None

    def share(self, a: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> tuple[str, int, int] | None:
        return None

    def shared_array(
        self, dtype: np.dtype[Any], shape: tuple[int, ...], path: str, offset: int, stamp: int
    ) -> Any:
        return SharedArray(dtype, shape, path, offset, stamp)


class Encoder:
    """Accumulates the bytes of one message; large arrays are kept as separate buffers."""

    __slots__ = ("buf", "parts", "ctx")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.buf = bytearray()
        self.parts: list[Any] = []

    def big(self, data: memoryview) -> None:
        """Append a large buffer without copying it."""
        if self.buf:
            self.parts.append(self.buf)
            self.buf = bytearray()
        self.parts.append(data)

    def buffers(self) -> list[Any]:
        """All bytes so far, as a list of buffers in order."""
        return [*self.parts, self.buf] if self.buf else list(self.parts)

    def nbytes(self) -> int:
        return len(self.buf) + sum(memoryview(p).nbytes for p in self.parts)


def _encode_str(buf: bytearray, s: str) -> None:
    data = s.encode("utf-8", "surrogateescape")
    buf += _U32.pack(len(data))
    buf += data


def _encode_array_head(buf: bytearray, tag: int, code: int, shape: tuple[int, ...]) -> None:
    buf += struct.pack("<BBB", tag, code, len(shape))
    for d in shape:
        buf += _U64.pack(d)


def _encode_shared(
    buf: bytearray, code: int, shape: tuple[int, ...], path: str, offset: int, stamp: int
) -> None:
    _encode_array_head(buf, SHARED, code, shape)
    _encode_str(buf, path)
    buf += _U64.pack(offset)
    buf += _U64.pack(stamp)


def _encode_array(enc: Encoder, a: np.ndarray[Any, Any], code: int) -> None:
    buf = enc.buf
    shared = enc.ctx.share(a, DTYPE_CODES[code])
    if shared is not None:
        _encode_shared(buf, code, a.shape, *shared)
        return
    _encode_array_head(buf, NDARRAY, code, a.shape)
    data = np.asfortranarray(a) if a.ndim > 1 else np.ascontiguousarray(a)
    if data.dtype.byteorder == ">":
        data = data.astype(data.dtype.newbyteorder("<"))
    raw = memoryview(data.reshape(-1, order="F")).cast("B")
    if raw.nbytes >= 1 << 16:
        enc.big(raw)
    else:
        enc.buf += raw


def encode(value: Any, enc: Encoder, depth: int = 0) -> None:
    """Append the encoding of `value` to `enc`."""
    buf = enc.buf
    t = type(value)
    if value is None:
        buf.append(NONE)
    elif t is bool:
        buf.append(TRUE if value else FALSE)
    elif t is int and _INT64_MIN <= value <= _INT64_MAX:
        buf += _TAG_I64.pack(INT, value)
    elif t is float:
        buf += _TAG_F64.pack(FLOAT, value)
    elif t is str:
        buf.append(STR)
        _encode_str(buf, value)
    elif t is list or t is tuple:
        if depth >= MAX_DEPTH:
            raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
        buf += _TAG_U32.pack(LIST if t is list else TUPLE, len(value))
        for item in value:
            encode(item, enc, depth + 1)
    elif t is dict:
        if depth >= MAX_DEPTH:
            raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
        buf += _TAG_U32.pack(DICT, len(value))
        for k, v in value.items():
            encode(k, enc, depth + 1)
            encode(v, enc, depth + 1)
    elif t is bytes or t is bytearray:
        buf += _TAG_U32.pack(BYTES, len(value))
        buf += value
    elif t is np.ndarray and value.dtype in CODE_OF:
        code = CODE_OF[value.dtype]
        if value.ndim == 0:
            buf += struct.pack("<BB", SCALAR, code)
            buf += value.astype(DTYPE_CODES[code]).tobytes()
        else:
            _encode_array(enc, value, code)
    elif isinstance(value, np.generic) and value.dtype in CODE_OF:
        code = CODE_OF[value.dtype]
        buf += struct.pack("<BB", SCALAR, code)
        buf += np.asarray(value, dtype=DTYPE_CODES[code]).tobytes()
    elif t is type and value in _CODE_OF_TYPE:
        buf += struct.pack("<BB", DTYPE, _CODE_OF_TYPE[value])
    elif t is SharedArray:
        _encode_shared(
            buf, CODE_OF[value.dtype], value.shape, value.path, value.offset, value.stamp
        )
    else:
        jid = enc.ctx.julia_id(value)
        if jid is not None:
            buf += _TAG_U64.pack(JLFUNC, jid)
            _encode_str(buf, getattr(value, "name", ""))
        else:
            buf += _TAG_U64.pack(HANDLE, enc.ctx.to_handle(value))


def encode_bytes(value: Any, ctx: Context | None = None) -> bytes:
    """The encoding of `value` as one `bytes` object (tests, vectors)."""
    enc = Encoder(ctx or PlainContext())
    encode(value, enc)
    return b"".join(bytes(p) for p in enc.buffers())


class _Reader:
    __slots__ = ("buf", "pos", "ctx", "end")

    def __init__(self, buf: memoryview, pos: int, ctx: Context) -> None:
        self.buf, self.pos, self.ctx, self.end = buf, pos, ctx, len(buf)

    def take(self, n: int) -> int:
        """Reserve `n` bytes, returning their start offset."""
        start = self.pos
        if n < 0 or start + n > self.end:
            raise DecodeError(
                f"value truncated: needs {n} bytes at offset {start}, frame ends at {self.end}"
            )
        self.pos = start + n
        return start

    def u8(self) -> int:
        return self.buf[self.take(1)]

    def u32(self) -> int:
        return _U32.unpack_from(self.buf, self.take(4))[0]

    def u64(self) -> int:
        return _U64.unpack_from(self.buf, self.take(8))[0]

    def str(self) -> str:
        n = self.u32()
        start = self.take(n)
        return bytes(self.buf[start : start + n]).decode("utf-8", "surrogateescape")


def _dtype(code: int) -> np.dtype[Any]:
    try:
        return DTYPE_CODES[code]
    except KeyError:
        raise DecodeError(f"unknown dtype code {code}") from None


def _read_container(r: _Reader, tag: int, depth: int) -> Any:
    """A list, tuple or dict, its elements read at `depth + 1`."""
    if depth >= MAX_DEPTH:
        raise DecodeError(f"value nested deeper than {MAX_DEPTH} levels")
    n = r.u32()
    if n > r.end - r.pos:  # every element takes at least one byte
        raise DecodeError(f"container claims {n} elements but only {r.end - r.pos} bytes remain")
    if tag == DICT:
        out: dict[Any, Any] = {}
        for _ in range(n):
            k = _read(r, depth + 1)
            try:
                out[k] = _read(r, depth + 1)
            except TypeError as err:
                raise DecodeError(f"dict key of type {type(k).__name__} is unhashable") from err
        return out
    items = [_read(r, depth + 1) for _ in range(n)]
    return items if tag == LIST else tuple(items)


def _read_array(r: _Reader) -> np.ndarray[Any, Any]:
    """An array by value: dtype, shape, then its elements in column-major order."""
    dt = _dtype(r.u8())
    ndim = r.u8()
    shape = tuple(r.u64() for _ in range(ndim))
    count = 1
    for d in shape:
        count *= d
    if count * dt.itemsize > r.end - r.pos:
        raise DecodeError(f"array of shape {shape} and dtype {dt} exceeds the frame")
    start = r.take(count * dt.itemsize)
    flat = np.frombuffer(r.buf, dt, count, start)
    return flat.reshape(shape, order="F")


def _read(r: _Reader, depth: int) -> Any:
    tag = r.u8()
    if tag == NONE:
        return None
    if tag == FALSE:
        return False
    if tag == TRUE:
        return True
    if tag == INT:
        return _I64.unpack_from(r.buf, r.take(8))[0]
    if tag == FLOAT:
        return _F64.unpack_from(r.buf, r.take(8))[0]
    if tag == STR:
        return r.str()
    if tag in (LIST, TUPLE, DICT):
        return _read_container(r, tag, depth)
    if tag == BYTES:
        n = r.u32()
        start = r.take(n)
        return bytes(r.buf[start : start + n])
    if tag == SCALAR:
        dt = _dtype(r.u8())
        start = r.take(dt.itemsize)
        return np.frombuffer(r.buf, dt, 1, start)[0]
    if tag == NDARRAY:
        return _read_array(r)
    if tag == HANDLE:
        return r.ctx.from_handle(r.u64())
    if tag == JLFUNC:
        id = r.u64()
        return r.ctx.julia_function(id, r.str())
    if tag == DTYPE:
        return _dtype(r.u8()).type
    if tag == SHARED:
        dt = _dtype(r.u8())
        shape = tuple(r.u64() for _ in range(r.u8()))
        path = r.str()
        offset = r.u64()
        return r.ctx.shared_array(dt, shape, path, offset, r.u64())
    raise DecodeError(f"unknown value tag 0x{tag:02x} at offset {r.pos - 1}")


def decode(buf: bytes | bytearray | memoryview, ctx: Context | None = None, pos: int = 0) -> Any:
    """Decode exactly one value that fills `buf[pos:]`."""
    r = _Reader(memoryview(buf), pos, ctx or PlainContext())
    value = _read(r, 0)
    if r.pos != r.end:
        raise DecodeError(f"{r.end - r.pos} bytes left over after the value")
    return value
