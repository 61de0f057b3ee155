"""What Julia shows of a Python exception, and the full text one call away.

Julia shows a `PyError` as its type and message, then the Python frames worth reading. Here
those are made short: TensorFlow's "defined at" and "Original stack trace" listings lose the
frames of the bridge, of devplace and of TensorFlow itself (a graph built from Julia has no
Python frame of the user's), the traceback keeps only frames outside them (a user's module,
json's parser), and a hint follows where devplace knows the usual cause (no `init(sess)`, an
op pinned to a device the session lacks). The full text, every frame but the bridge's, is kept
for `DevPlace.last_error()`; with `DEVPLACE_DEBUG` set in the host, Julia gets it all at once,
bridge frames included.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import traceback

__all__ = ["describe", "internal", "internal_dirs", "last_text"]

_BRIDGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_DEVPLACE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: Packages whose frames say nothing to a Julia user (their code, not the user's).
_LIBRARIES = ("tensorflow", "keras", "tf_keras")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+, in ')
_LISTING = re.compile(r"( defined at \(most recent call last\):|^Original stack trace for .*:)$")
_MORE = "(DevPlace.last_error() prints the full text: every Python frame and TensorFlow's stacks)"

_last = ""


def _debug() -> bool:
    return os.environ.get("DEVPLACE_DEBUG", "") not in ("", "0")


def _type_name(exc: BaseException) -> str:
    t = type(exc)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def internal_dirs() -> tuple[str, ...]:
    """Where code that is not the user's lives: devplace, TensorFlow and Keras (as loaded), and
    `contextlib` (the entry of a `with` block, e.g. a device scope refusing a malformed device)."""
    loaded = (sys.modules.get(name) for name in _LIBRARIES)
    found = [os.path.dirname(m.__file__) + os.sep for m in loaded if getattr(m, "__file__", None)]
    return (_DEVPLACE_DIR, *found, contextlib.__file__)


def internal(filename: str, dirs: tuple[str, ...]) -> bool:
    """Whether a frame of `filename` is not the user's code (under `dirs`, or made by Python)."""
    return filename.startswith(dirs) or filename.startswith("<frozen ") or filename == "<string>"


def _traceback(exc: BaseException, drop: tuple[str, ...], chain: bool = True) -> str:
    """`exc`'s traceback (with the exceptions it was raised from when `chain`) without frames
    under `drop` and without the final "Type: message" line (Julia shows it first); "" when no
    frame is left."""
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    if not chain:
        te.__cause__ = te.__context__ = None
    seen: set[int] = set()
    stack: list[traceback.TracebackException | None] = [te]
    kept_any = False
    while stack:
        t = stack.pop()
        if t is None or id(t) in seen:
            continue
        seen.add(id(t))
        kept = [f for f in t.stack if not internal(f.filename, drop)]
        kept_any |= bool(kept)
        t.stack = traceback.StackSummary.from_list(kept)
        stack += [t.__cause__, t.__context__]
    if not kept_any:
        return ""
    lines = list(te.format())
    tail = list(te.format_exception_only())
    if lines[-len(tail) :] == tail:
        lines = lines[: -len(tail)]
    return "".join(lines)


def _message(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    return str(exc) if not isinstance(exc, KeyError) else str(exc).strip("'\"")


def _short_message(text: str, drop: tuple[str, ...]) -> str:
    """`text` without the frames under `drop` in TensorFlow's listings, and without a listing's
    heading when none of its frames is left."""
    kept: list[str] = []
    for line in text.splitlines():
        frame = _FRAME.match(line)
        if frame and internal(frame["file"], drop):
            continue
        kept.append(line)
    shown: list[str] = []
    for i, line in enumerate(kept):
        following = kept[i + 1] if i + 1 < len(kept) else ""
        if _LISTING.search(line) and not _FRAME.match(following):
            continue
        if not line.strip() and (not shown or not shown[-1].strip()):
            continue
        if line.strip() and line == next((s for s in reversed(shown) if s.strip()), None):
            continue  # the twin of the line before, once the listings between are gone
        shown.append(line)
    return "\n".join(shown).strip()


def _hint(text: str) -> str:
    """What usually causes an error with message `text`, in Julia's words, where devplace
    knows it; "" elsewhere."""
    if "uninitialized value" in text or "uninitialized variable" in text:
        return "Hint: init(sess) initialises the variables; call it once they are built, before run"
    if "soft=True" in text or "Cannot assign a device for operation" in text:
        return (
            "Hint: Session(soft=true) lets TensorFlow put the op on a device this session has "
            "(placement(sess, fetches) then shows where it ran), or pin it to one of the devices "
            "named above"
        )
    return ""


def describe(exc: BaseException) -> tuple[str, str, str]:
    """(type, message, traceback) of `exc` as Julia shows it, short as the module says (all of
    it with DEVPLACE_DEBUG); the full text is kept for `last_text`."""
    global _last
    kind, message = _type_name(exc), _message(exc)
    bridge = (_BRIDGE_DIR,) if not _debug() else ()
    full_message, full_traceback = _short_message(message, bridge), _traceback(exc, bridge)
    _last = f"{kind}: {full_message}\n\n{full_traceback}".rstrip() + "\n"
    if _debug():
        return kind, full_message, full_traceback
    drop = internal_dirs()
    short, shown = _short_message(message, drop), _traceback(exc, drop, chain=False)
    more = _MORE if short != full_message or shown != full_traceback else ""
    return kind, "\n".join(p for p in (short, _hint(message), more) if p), shown


def last_text() -> str:
    """The full text of the latest exception sent to Julia: type, message, every Python frame
    but the bridge's (all with DEVPLACE_DEBUG)."""
    return _last
