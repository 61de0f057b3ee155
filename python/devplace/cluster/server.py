"""One TF server of a cluster, as a process: `python -m devplace.cluster.server ...`.

It starts `tf.compat.v1.train.Server` for one task of the spec, writes its PID to the ready
file once the server listens, and serves until killed (SIGTERM) or, with `--exit-with-parent`,
until the process that started it is gone, so no server outlives its launcher. With `--cores`
it pins itself to those cores before TensorFlow starts a thread, sizes TF's thread pools to
match, and runs its compute threads below its RPC threads (`cores.yield_to_messages`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from devplace.cluster import cores as core_sets
from devplace.cluster import host_checks, procs
from devplace.core import atomic
from devplace.core.errors import Error

__all__ = ["main", "start_server"]


def start_server(
    spec: object, job: str, task: int, cpus: int = 1, cores: Sequence[int] | None = None
) -> object:
    """Start the TF server for `/job:<job>/task:<task>` of `spec` (any form `as_spec` takes).

    cpus: logical CPU devices. cores: the cores this process is pinned to (`cores.pin`);
    given, the intra-op pool gets one thread per core and the inter-op pool one more: the gRPC
    worker service runs its handlers (RecvTensor, RunGraph) there, and with only one thread per
    core they wait until a whole chain of ops has run.
    """
    from devplace.adapter._tf import tf
    from devplace.cluster.spec import address, as_spec

    cluster = as_spec(spec)
    where = address(cluster, job, task)  # a clear ClusterSpecError for an unknown job or task
    config = tf.ConfigProto(device_count={"CPU": int(cpus)})
    if cores:
        config.inter_op_parallelism_threads = len(cores) + 1
        config.intra_op_parallelism_threads = len(cores)
    try:
        return tf.train.Server(
            cluster, job_name=job, task_index=int(task), config=config, start=True
        )
    except tf.errors.UnknownError:  # TF says only "Could not start gRPC server"
        _explain_start_failure(job, task, where)
        raise


def _explain_start_failure(job: str, task: int, where: str) -> None:
    """Raise `HostCheckError` naming the task and its port when the port is why its server
    could not start (taken by another process, or privileged)."""
    from devplace.cluster.spec import task_name

    try:
        host_checks.check_port(host_checks.split_address(where)[1])
    except host_checks.HostCheckError as err:
        raise host_checks.HostCheckError(
            f"cannot start the server of {task_name(job, task)} at {where}: {err} (any free "
            "port from 1024 to 65535 will do; `ss -ltn` lists those in use, and "
            "dpc.LocalCluster picks free ones itself)"
        ) from None


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, start the server, mark it ready, and serve."""
    parser = argparse.ArgumentParser(prog="python -m devplace.cluster.server", description=__doc__)
    parser.add_argument("--spec", required=True, help="cluster spec: JSON text or a JSON file")
    parser.add_argument("--job", required=True, help="this task's job, e.g. ps or worker")
    parser.add_argument("--task", type=int, default=0, help="this task's index in its job")
    parser.add_argument("--cpus", type=int, default=1, help="logical CPU devices (default 1)")
    parser.add_argument("--cores", help="pin to this core list (0-3,6)")
    parser.add_argument("--ready-file", help="write this process's PID here once listening")
    parser.add_argument("--exit-with-parent", action="store_true", help="exit when parent does")
    args = parser.parse_args(argv)
    pinned = core_sets.resolve(core_sets.parse_list(args.cores)) if args.cores else None
    if pinned:
        core_sets.pin(pinned)  # before any thread starts: all of them inherit it
    if args.exit_with_parent:
        procs.exit_with_parent()
    try:
        server = start_server(args.spec, args.job, args.task, args.cpus, pinned)
    except Error as err:
        print(f"devplace: {err}", file=sys.stderr)
        return 1
    if pinned:
        core_sets.yield_to_messages()
    print(f"devplace: serving /job:{args.job}/task:{args.task} ({os.getpid()})", flush=True)
    if args.ready_file:
        atomic.write_text(args.ready_file, f"{os.getpid()}\n")
    server.join()  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    sys.exit(main())
