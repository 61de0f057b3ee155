"""`devplace cluster up|down|serve|wait`: clusters of TF servers, on one machine or many.

`up` starts the servers, prints the spec (and writes it as JSON), records the PIDs in a state
file and runs until Ctrl-C (or SIGTERM), then stops them. `down` stops the cluster recorded in
the state file, by PID, from another terminal. `serve` runs this host's one task of a cluster
(from a spec, TF_CONFIG or a Slurm step) until Ctrl-C or SIGTERM; `wait` returns once every
task of a spec answers (the chief's side).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from devplace.cluster import LocalCluster

__all__ = ["down", "register", "serve", "up", "wait"]


def _count(least: int) -> object:
    def parse(text: str) -> int:
        if not text.isdigit() or int(text) < least:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {least}, got {text!r}")
        return int(text)

    return parse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `cluster` command with its `up` and `down` subcommands."""
    parser = subparsers.add_parser(
        "cluster",
        help="start or stop a local cluster of TF servers",
        description="A local cluster of real TensorFlow servers on loopback ports.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--state-file",
        type=Path,
        help="where the running cluster's PIDs are kept "
        "(default: $DEVPLACE_CLUSTER_STATE or ~/.cache/devplace/cluster-state.json)",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    start = actions.add_parser(
        "up",
        parents=[common],
        help="start servers; run until Ctrl-C",
        description="Start ps and worker servers, print the cluster spec and write it as JSON; "
        "run until Ctrl-C or `devplace cluster down`, then stop them.",
    )
    start.add_argument("--ps", type=_count(0), default=1, metavar="N", help="ps tasks (1)")
    start.add_argument("--workers", type=_count(1), default=2, metavar="M", help="workers (2)")
    start.add_argument("--cpus", type=_count(1), default=1, metavar="C", help="CPUs per server")
    start.add_argument(
        "--cores-per-task",
        type=_count(1),
        metavar="K",
        help="pin each server to its own K cores, with K threads per pool (default: no pinning)",
    )
    start.add_argument(
        "--spec-file", type=Path, help="write the spec here (default: next to the state file)"
    )
    isolation = start.add_mutually_exclusive_group()
    isolation.add_argument(
        "--isolate",
        dest="isolate",
        action="store_const",
        const=True,
        help="require a loopback-only network namespace (fail without one)",
    )
    isolation.add_argument(
        "--no-isolate",
        dest="isolate",
        action="store_const",
        const=False,
        help="never use a network namespace (servers listen on every interface)",
    )
    start.add_argument(
        "--start-timeout", type=float, default=60.0, metavar="S", help="seconds to start (60)"
    )
    start.set_defaults(func=up)
    stop = actions.add_parser("down", parents=[common], help="stop the cluster `up` started")
    stop.set_defaults(func=down)
    _register_serve(actions)
    _register_wait(actions)
    parser.set_defaults(func=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _state_file(args: argparse.Namespace) -> Path:
    from devplace.cluster.state import default_state_file

    return Path(args.state_file) if args.state_file else default_state_file()


def _output_problem(flag: str, path: Path) -> str | None:
    """Why `path` (given as `flag`) cannot be written, in one line; None if it can."""
    if path.suffix.lower() != ".json":
        return f"{flag} {str(path)!r}: the file is JSON, its name must end in .json"
    folder = path.parent
    if not folder.is_dir():
        return f"{flag} {str(path)!r}: folder {str(folder)!r} does not exist (create it first)"
    if not os.access(folder, os.W_OK):
        return f"{flag} {str(path)!r}: folder {str(folder)!r} is not writable"
    if path.is_dir():
        return f"{flag} {str(path)!r} is a folder, not a file"
    return None


def _up_refusal(state_file: Path, spec_file: Path) -> int:
    """The exit status when `up` cannot start here (2: a bad output file, 1: a cluster is
    already up), after saying why; 0 when it can."""
    from devplace.cluster.state import read_state

    for flag, path in (("--state-file", state_file), ("--spec-file", spec_file)):
        if problem := _output_problem(flag, path):
            print(f"devplace cluster: error: {problem}", file=sys.stderr)
            return 2
    state = read_state(state_file)
    if state is not None and state.running():
        print(
            f"devplace cluster: a cluster is already up (pid {state.owner.pid}, state file "
            f"{state_file}). Stop it with `devplace cluster down`, or pass another "
            "--state-file.",
            file=sys.stderr,
        )
        return 1
    return 0


def _each_line_as_printed() -> None:
    """Send each output line on at once, also to a file or pipe (`cluster up > up.log`)."""
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)


def _say_up(args: argparse.Namespace, cluster: LocalCluster) -> None:
    """What a started cluster is: its isolation, cores, spec and where to connect."""
    from devplace.cluster.cores import describe

    where = (
        "in a loopback-only network namespace"
        if cluster.isolated
        else "listening on EVERY interface, without authentication"
    )
    print(f"devplace cluster: {args.ps} ps, {args.workers} workers, {where}")
    for role, cores in cluster.cores.items():
        print(f"  {role} pinned to cores {describe(cores)}")
    print(json.dumps(cluster.spec, indent=2))
    print(f"spec written to {cluster.spec_file}")
    print(f"session target: {cluster.target('worker', 0)}  (/job:worker/task:0)")
    print("Stop with Ctrl-C, or `devplace cluster down` from another terminal.")


def up(args: argparse.Namespace) -> int:
    """Start the cluster, print its spec, and hold it until Ctrl-C or SIGTERM."""
    _each_line_as_printed()
    state_file = _state_file(args)
    spec_file = args.spec_file or state_file.with_name("cluster-spec.json")
    if not args.state_file:
        state_file.parent.mkdir(parents=True, exist_ok=True)  # our cache folder
    if refused := _up_refusal(state_file, spec_file):
        return refused
    from devplace.cluster import ClusterStartError, LocalCluster, procs  # loads TensorFlow

    with procs.interrupted_by_signals():
        try:
            cluster = LocalCluster(
                ps=args.ps,
                workers=args.workers,
                cpus=args.cpus,
                cores_per_task=args.cores_per_task,
                isolate=args.isolate,
                spec_file=spec_file,
                state_file=state_file,
                start_timeout=args.start_timeout,
                stop_owner=True,
            )
            cluster.start()
        except (ClusterStartError, ValueError, OSError) as err:
            print(f"devplace cluster: {err}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 130
        try:
            _say_up(args, cluster)
            _hold(cluster)
        except KeyboardInterrupt:
            pass
        finally:
            cluster.stop()
    print("devplace cluster: stopped")
    return 0


def _hold(cluster: LocalCluster) -> None:
    """Wait (until interrupted), saying once when a server exits on its own."""
    reported: set[str] = set()
    while True:
        for role, status in cluster.exited().items():
            if role not in reported:
                reported.add(role)
                print(f"devplace cluster: {role} exited with status {status}")
        time.sleep(0.5)


def down(args: argparse.Namespace) -> int:
    """Stop the cluster recorded in the state file, by PID."""
    from devplace.cluster import stop_cluster

    state_file = _state_file(args)
    if not state_file.exists():
        print(f"devplace cluster: no cluster is up (no state file {state_file})", file=sys.stderr)
        return 1
    try:
        stopped = stop_cluster(state_file)
    except ValueError as err:
        print(f"devplace cluster: {err}", file=sys.stderr)
        return 1
    print(f"devplace cluster: stopped {', '.join(stopped) or 'nothing (it had already exited)'}")
    return 0


_SERVE_DESCRIPTION = """\
Serve this host's task of a cluster in the foreground until Ctrl-C or SIGTERM. Name the task
in one of three ways:
  --spec FILE --job NAME --task I   a spec file (JSON: {"worker": ["10.0.0.1:2222", ...]})
  (no arguments)                    the TF_CONFIG environment variable, as TF's strategies use
  --from-slurm                      a Slurm step (run under srun): TF's SlurmClusterResolver
Before starting it checks that the task's address is one of this host's and its port is free.
Once the server accepts connections it prints the task, its address and "serving".
TF servers have no authentication: run them on a private network (docs/cluster.md)."""


def _register_serve(actions: argparse._SubParsersAction) -> None:
    serve_ = actions.add_parser(
        "serve",
        help="serve this host's task of a cluster (spec, TF_CONFIG or Slurm) until Ctrl-C",
        description=_SERVE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve_.add_argument("--spec", metavar="FILE", help="cluster spec (JSON file or text)")
    serve_.add_argument("--job", metavar="NAME", help="this task's job in the spec")
    serve_.add_argument("--task", type=_count(0), metavar="I", help="its index (default 0)")
    serve_.add_argument(
        "--from-slurm", action="store_true", help="take the task from the Slurm step (srun)"
    )
    serve_.add_argument(
        "--slurm-jobs",
        metavar="JOB=N,...",
        help="with --from-slurm: jobs and their task counts in Slurm task order, e.g. "
        "ps=1,worker=3 (default: every Slurm task a worker)",
    )
    serve_.add_argument(
        "--port-base", type=_count(1), default=8888, metavar="P", help="Slurm: first port (8888)"
    )
    serve_.add_argument(
        "--cores",
        metavar="K|LIST",
        help="pin the server to K cores (the first K usable) or a core list (0-3,6; 6-6 for "
        "core 6 alone), with that many threads per pool",
    )
    serve_.add_argument("--cpus", type=_count(1), default=1, metavar="C", help="CPU devices (1)")
    serve_.add_argument(
        "--wait",
        type=float,
        metavar="S",
        help="after serving, wait up to S seconds until every task answers; fail if not",
    )
    serve_.add_argument("--write-spec", type=Path, metavar="FILE", help="write the spec here")
    serve_.add_argument(
        "--start-timeout", type=float, default=120.0, metavar="S", help="seconds to start (120)"
    )
    serve_.set_defaults(func=serve)


def _slurm_jobs(text: str | None) -> dict[str, int] | None:
    if text is None:
        return None
    jobs: dict[str, int] = {}
    for part in text.split(","):
        name, _, count = part.partition("=")
        if not name.strip() or not count.strip().isdigit() or int(count) < 1:
            raise ValueError(f"--slurm-jobs {text!r}: expected JOB=N pairs such as ps=1,worker=3")
        jobs[name.strip()] = int(count)
    return jobs


def serve(args: argparse.Namespace) -> int:
    """Serve this host's task until Ctrl-C or SIGTERM; 1 with the reason if it cannot."""
    _each_line_as_printed()
    from devplace.cluster.probe import ClusterNotReadyError
    from devplace.cluster.serving import serve as serve_task

    def warn(message: Warning | str, *args: object, **kwargs: object) -> None:
        print(f"devplace cluster serve: warning: {message}", file=sys.stderr, flush=True)

    try:
        warnings.showwarning = warn
        serve_task(
            args.spec,
            args.job,
            args.task,
            from_slurm=args.from_slurm,
            slurm_jobs=_slurm_jobs(args.slurm_jobs),
            port_base=args.port_base,
            cores=args.cores,
            cpus=args.cpus,
            wait=args.wait,
            write_spec=args.write_spec,
            start_timeout=args.start_timeout,
        )
    except (ValueError, OSError, RuntimeError, ClusterNotReadyError) as err:
        print(f"devplace cluster serve: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # a second Ctrl-C while stopping
        return 130
    return 0


def _register_wait(actions: argparse._SubParsersAction) -> None:
    wait_ = actions.add_parser(
        "wait",
        help="wait until every task of a spec answers (the chief's side)",
        description="Return (status 0) once every task of the spec answers; else, after the "
        "timeout, name the tasks that do not (status 1).",
    )
    wait_.add_argument("spec", metavar="SPEC", help="cluster spec (JSON file or text)")
    wait_.add_argument(
        "--timeout", type=float, default=60.0, metavar="S", help="seconds to wait (60)"
    )
    wait_.set_defaults(func=wait)


def wait(args: argparse.Namespace) -> int:
    """Wait until every task answers; 1 naming those that do not."""
    from devplace.cluster.probe import ClusterNotReadyError, ready_words, wait_ready
    from devplace.cluster.spec import ClusterSpecError, task_table

    try:
        took = wait_ready(args.spec, args.timeout)
    except (ClusterNotReadyError, ClusterSpecError) as err:
        print(f"devplace cluster wait: {err}", file=sys.stderr)
        return 1
    count = sum(len(tasks) for tasks in task_table(args.spec).values())
    print(f"devplace cluster: {ready_words(count)} ({took:.1f} s)")
    return 0
