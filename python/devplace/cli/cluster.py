"""Placeholder for `devplace cluster` so the dispatcher imports; the cluster engineer replaces it."""


def register(subparsers: object) -> None:
    """Add nothing yet: `devplace cluster` is being written in parallel."""
