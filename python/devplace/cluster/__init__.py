"""Clusters of TF servers: specs, a local launcher, peer-aware sessions, checkpoints.

Built on TF's own distributed runtime (`tf.compat.v1.train.Server`, `ClusterSpec`,
`Session("grpc://...")`). Everything takes plain values (strings, ints, dicts), so the Julia
side can call it as is.
"""

from devplace.cluster.checkpoint import Checkpointer
from devplace.cluster.errors import (
    PeerAbortedError,
    PeerDeadlineError,
    PeerUnavailableError,
    TaskStatus,
    explain,
)
from devplace.cluster.launcher import ClusterStartError, InsecureClusterWarning, LocalCluster
from devplace.cluster.ready import wait_usable
from devplace.cluster.session import ClusterSession
from devplace.cluster.spec import (
    ClusterSpecError,
    address,
    as_spec,
    device,
    devices,
    jobs,
    read_spec,
    spec_dict,
    target,
    task_at,
    task_name,
    tasks,
    write_spec,
)
from devplace.cluster.state import default_state_file, read_state, stop_cluster

__all__ = [
    "Checkpointer",
    "ClusterSession",
    "ClusterSpecError",
    "ClusterStartError",
    "InsecureClusterWarning",
    "LocalCluster",
    "PeerAbortedError",
    "PeerDeadlineError",
    "PeerUnavailableError",
    "TaskStatus",
    "address",
    "as_spec",
    "default_state_file",
    "device",
    "devices",
    "explain",
    "jobs",
    "read_spec",
    "read_state",
    "spec_dict",
    "stop_cluster",
    "target",
    "task_at",
    "task_name",
    "tasks",
    "wait_usable",
    "write_spec",
]
