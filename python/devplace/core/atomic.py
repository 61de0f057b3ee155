"""Files replaced whole: a reader sees the old content or the new, never a half-written file.

Every file devplace writes for a user (traces, placements, pictures, spec and state files,
JSON/CSV exports) goes through `replace_file`: the content is written to a temporary file in the
same folder, flushed to disk, and renamed over the target. A failure at any point (a full disk,
an exception while serialising) leaves the previous file whole, removes the temporary file and
raises `FileWriteError` naming the path. A path that names a device or a pipe (`/dev/null`,
`/dev/full`) is written in place, and its failures (ENOSPC at flush or close) raise the same
error; a symbolic link is followed, so the file it points to is replaced. Standard library only,
so that processes which do not import TensorFlow (the cluster forwarder) can use it too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from devplace.core.errors import Error

__all__ = ["FileWriteError", "folder_problem", "replace_file", "write_bytes", "write_text"]


class FileWriteError(Error, OSError):
    """A file could not be written; the previous content (if any) is left as it was."""


# What to do when the OS refuses a write, by errno.
_FIXES = {
    errno.EACCES: "{folder!r} is not writable for this user (devplace writes a temporary file "
    "there and renames it over the target): choose a folder you can write to, or change its "
    "permissions",
    errno.EROFS: "{folder!r} is on a read-only file system: choose a path on a writable one",
    errno.ENOSPC: "the disk holding {folder!r} is full: free some space or choose another disk",
    errno.EDQUOT: "your disk quota is used up: free some space or choose another disk",
    errno.ENAMETOOLONG: "the name is too long for the file system: choose a shorter one",
    errno.EISDIR: "it is a folder: give a file name, e.g. {example!r}",
}
_FIXES[errno.EPERM] = _FIXES[errno.EACCES]


def _refused(target: Path, err: OSError, after: str = "") -> FileWriteError:
    """The error for a write the OS refused: the path, the OS's reason, and what to do."""
    fix = _FIXES.get(err.errno or 0, "choose another path")
    return FileWriteError(
        f"cannot write {str(target)!r}: {err.strerror or err}{after}. Hint: "
        + fix.format(folder=str(target.parent), example=str(target / "name"))
    )


def folder_problem(path: str | os.PathLike[str]) -> str | None:
    """Why the folder of `path` cannot hold it (missing, or a file), or None when it can."""
    folder = Path(path).parent
    if folder.is_dir():
        return None
    for above in (folder, *folder.parents):
        if os.path.lexists(above) and not above.is_dir():
            what = "a file, not a folder" if above.is_file() else "not a folder"
            return f"{str(above)!r} is {what}: choose a path under a folder"
    return f"folder {str(folder)!r} does not exist (create it first or choose another path)"


@contextlib.contextmanager
def _write_in_place(path: Path, mode: str, **open_kwargs: Any) -> Iterator[IO[Any]]:
    """Write straight into a device or a pipe: there is no file to rename over."""
    try:
        with open(path, mode, **open_kwargs) as handle:
            yield handle
            handle.flush()
    except OSError as err:
        real = Path(os.path.realpath(path))
        through = f" (written through {str(path)!r})" if real != path else ""
        raise _refused(real, err, through) from err


@contextlib.contextmanager
def replace_file(
    path: str | os.PathLike[str], mode: str = "w", **open_kwargs: Any
) -> Iterator[IO[Any]]:
    """Open a temporary file beside `path` for writing; on success rename it over `path`.

    `mode` is "w" (text, UTF-8 unless `encoding` is given) or "wb". The folder must exist:
    a missing folder is an error naming it rather than a silently created tree.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"replace_file: mode must be 'w' or 'wb', got {mode!r}")
    if "b" not in mode:
        open_kwargs.setdefault("encoding", "utf-8")
    if os.path.exists(path) and not (os.path.isfile(path) or os.path.isdir(path)):
        # a device or a pipe, or a link to one (/dev/stdout): nothing to rename over
        with _write_in_place(Path(path), mode, **open_kwargs) as handle:
            yield handle
        return
    target = Path(os.path.realpath(path) if os.path.islink(path) else path)
    problem = folder_problem(target)
    if problem:
        raise FileWriteError(f"cannot write {os.fspath(path)!r}: {problem}")
    folder = target.parent
    if os.path.isdir(target):
        raise _refused(target, IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)))
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as err:
        raise _refused(target, err) from err
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, mode, **open_kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if target.exists():
            # keep the permissions of the file being replaced
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        tmp.replace(target)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise _refused(target, err, "; the previous file is unchanged") from err
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write `text` to `path` atomically (see `replace_file`); returns the path."""
    with replace_file(path, "w") as handle:
        handle.write(text)
    return Path(path)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to `path` atomically (see `replace_file`); returns the path."""
    with replace_file(path, "wb") as handle:
        handle.write(data)
    return Path(path)
