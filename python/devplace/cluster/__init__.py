"""Clusters of TF servers: specs, a local launcher, one host's task (`serve`), peer-aware
sessions, checkpoints.

Built on TF's own distributed runtime (`tf.compat.v1.train.Server`, `ClusterSpec`,
`Session("grpc://...")`). Everything takes plain values (strings, ints, dicts), so the Julia
side can call it as is.
"""

from devplace.core._lazy import lazy_attributes

# Each name loads its module on first use: `devplace cluster down` and the server processes do
# not pay for what they do not use (the launcher and sessions load TensorFlow).
_LAZY = {
    "ClusterNotReadyError": "devplace.cluster.probe",
    "wait_ready": "devplace.cluster.probe",
    "HostCheckError": "devplace.cluster.host_checks",
    "ServeError": "devplace.cluster.serving",
    "UnauthenticatedServerWarning": "devplace.cluster.serving",
    "serve": "devplace.cluster.serving",
    "TaskConfigError": "devplace.cluster.task_config",
    "Checkpointer": "devplace.cluster.checkpoint",
    "CoresError": "devplace.cluster.cores",
    "PeerAbortedError": "devplace.cluster.errors",
    "PeerDeadlineError": "devplace.cluster.errors",
    "PeerUnavailableError": "devplace.cluster.errors",
    "TaskStatus": "devplace.cluster.errors",
    "explain": "devplace.cluster.errors",
    "ClusterStartError": "devplace.cluster.launcher",
    "InsecureClusterWarning": "devplace.cluster.launcher",
    "LocalCluster": "devplace.cluster.launcher",
    "wait_usable": "devplace.cluster.ready",
    "ClusterSession": "devplace.cluster.session",
    "ClusterSpecError": "devplace.cluster.spec",
    "address": "devplace.cluster.spec",
    "as_spec": "devplace.cluster.spec",
    "device": "devplace.cluster.spec",
    "devices": "devplace.cluster.spec",
    "jobs": "devplace.cluster.spec",
    "read_spec": "devplace.cluster.spec",
    "spec_dict": "devplace.cluster.spec",
    "target": "devplace.cluster.spec",
    "task_table": "devplace.cluster.spec",
    "task_at": "devplace.cluster.spec",
    "task_name": "devplace.cluster.spec",
    "tasks": "devplace.cluster.spec",
    "write_spec": "devplace.cluster.spec",
    "default_state_file": "devplace.cluster.state",
    "read_state": "devplace.cluster.state",
    "stop_cluster": "devplace.cluster.state",
}


__all__ = [
    "Checkpointer",
    "ClusterNotReadyError",
    "ClusterSession",
    "ClusterSpecError",
    "ClusterStartError",
    "CoresError",
    "HostCheckError",
    "InsecureClusterWarning",
    "LocalCluster",
    "PeerAbortedError",
    "PeerDeadlineError",
    "PeerUnavailableError",
    "ServeError",
    "TaskConfigError",
    "TaskStatus",
    "UnauthenticatedServerWarning",
    "address",
    "as_spec",
    "default_state_file",
    "device",
    "devices",
    "explain",
    "jobs",
    "read_spec",
    "read_state",
    "serve",
    "spec_dict",
    "stop_cluster",
    "target",
    "task_at",
    "task_name",
    "task_table",
    "tasks",
    "wait_ready",
    "wait_usable",
    "write_spec",
]

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, __all__)
