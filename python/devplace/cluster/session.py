"""Sessions on a cluster task whose peer failures name the task, its address and a fix."""

from __future__ import annotations

from typing import Any

from devplace.adapter.session import DEFAULT_REMOTE_TIMEOUT, Session
from devplace.adapter.session_options import check_option
from devplace.cluster import spec as specs
from devplace.cluster.errors import PEER_FAILURES, explain

__all__ = ["ClusterSession"]


class ClusterSession(Session):
    """A `devplace.Session` on one task of a cluster (`grpc://` of `/job:<job>/task:<task>`).

    cluster: the spec in any form `as_spec` takes, or a `LocalCluster`. Every other keyword
    goes to `devplace.Session`. `timeout` (default `DEFAULT_REMOTE_TIMEOUT` seconds) bounds
    every `run`, including the liveness probe that finds the task at fault (TF's own deadline
    is a tenth, at most 1 s, shorter). A dead, hung or restarted peer raises `PeerUnavailableError`,
    `PeerDeadlineError` or `PeerAbortedError` (subclasses of TF's errors) naming the tasks and
    addresses at fault.
    """

    def __init__(self, cluster: Any, job: str = "worker", task: int = 0, **kwargs: Any):
        cluster = getattr(cluster, "cluster_spec", cluster)
        self.cluster_spec = specs.as_spec(cluster)
        self.target = specs.target(self.cluster_spec, job, int(task))
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = DEFAULT_REMOTE_TIMEOUT
        self.timeout = check_option("timeout", kwargs["timeout"])
        # After TF's deadline come the probe that names a silent task and the explanation; all
        # must end within `timeout`. A tenth of it (at most 1 s) is kept back, 3/4 for the probe.
        reserve = min(1.0, 0.1 * self.timeout)
        self.probe_timeout = 0.75 * reserve
        kwargs["timeout"] = self.timeout - reserve
        super().__init__(target=self.target, **kwargs)

    def _explain(self, err: Exception) -> Exception:
        """Peer failures name the tasks of the whole spec at fault (`Session.run` calls it)."""
        return explain(err, self.cluster_spec, self.target, self.timeout, self.probe_timeout)

    def close(self) -> None:
        """Close the session; one whose master died or restarted is already gone, quietly."""
        try:
            super().close()
        except PEER_FAILURES:
            pass
