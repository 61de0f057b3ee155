"""Kill a LocalCluster's processes and remove its files once the launcher is gone.

`python reaper.py [--remove PATH ...]`, started by the launcher with a pipe on stdin. The
launcher writes one line per process it starts, `PID START_TIME`; the end of that input means
the launcher has gone, whether it stopped the cluster itself or was killed (even by SIGKILL,
the kernel closes its end of the pipe). Then every recorded process still running gets SIGKILL
on its process group (each leads its own session), which ends it even when stopped (SIGSTOP),
where a server's own exit-with-parent thread could never run; and the paths are removed.

Run by file path with the standard library and psutil only: it starts fast, never imports
TensorFlow, and leads its own session, so Ctrl-C in the launcher's terminal does not reach it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

if __package__:
    from devplace.cluster import procs
else:  # run as a script: the sibling module, without importing devplace (and TensorFlow)
    import procs  # type: ignore[import-not-found, no-redef]

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Read `PID START_TIME` lines until end of input, then kill those and remove the paths."""
    parser = argparse.ArgumentParser(prog="reaper.py", description=__doc__)
    parser.add_argument("--remove", action="append", default=[], help="file or folder to remove")
    args = parser.parse_args(argv)
    recorded = [line.split() for line in sys.stdin if line.strip()]
    for pid, started in recorded:
        procs.kill_group(int(pid), float(started))
    for path in map(Path, args.remove):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
