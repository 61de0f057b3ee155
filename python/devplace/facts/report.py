"""Placement reports: for each op the device asked for, the device used, and the transfers.

The actual devices come from what the runtime ran (`RunMetadata.partition_graphs`, read by
`devplace.facts.traced`), never from `op.device`, which only records the request: a soft-placed op
says `/device:GPU:0` there while it ran on the CPU.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from tabulate import tabulate

from devplace.adapter.devices import DeviceSpecError, matches
from devplace.core.atomic import write_text
from devplace.core.errors import Error
from devplace.core.formatting import fetched_line, format_bytes, plural
from devplace.core.printed import MAX_NAMES, MAX_ROWS, Printed, devices_line, more, names
from devplace.facts.trace import Fetch, Transfer

__all__ = [
    "MAX_TRANSFER_ROWS",
    "Fetch",
    "OpNotRunError",
    "OpPlacement",
    "PlacementReport",
    "Transfer",
]

#: Transfers listed in a text report before the rest is counted (`to_json()` has every one).
MAX_TRANSFER_ROWS = 20


class OpNotRunError(Error, KeyError):
    """An op asked of a placement report did not run; the message says why and what to do."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class OpPlacement:
    """Where one op was asked to run and where it ran; a `fed` op (a fed placeholder) did not
    run: the feed took its place, on the device `actual`."""

    name: str
    op_type: str
    requested: str
    actual: str
    fed: bool = False

    @property
    def type_shown(self) -> str:
        """The op's type as the views show it: `Placeholder (fed)` for a fed op."""
        return f"{self.op_type} (fed)" if self.fed else self.op_type

    @property
    def moved(self) -> bool:
        """True when the runtime put the op somewhere other than its (partial) request."""
        if not self.requested or self.fed:
            return False
        try:
            return not matches(self.requested, self.actual)
        except DeviceSpecError:
            return True


@dataclass(repr=False)
class PlacementReport(Printed):
    """The placement of every op that ran for some fetches, the transfers it caused, and the
    tensors fetched to the client (`fetched`: no transfers, whatever device they come from)."""

    ops: list[OpPlacement]
    transfers: list[Transfer]
    optimized_away: list[str]
    fetched: list[Fetch] = field(default_factory=list)
    #: The columns of `transfer_rows`.
    TRANSFER_HEADERS: ClassVar[tuple[str, ...]] = ("tensor", "from", "to", "bytes", "read by")

    def __getitem__(self, name: str) -> OpPlacement:
        for op in self.ops:
            if op.name == name:
                return op
        if name in self.optimized_away:
            raise OpNotRunError(
                f"op {name!r} did not run: TensorFlow's optimizer (Grappler) folded or pruned "
                "it, so it has no device; make the Session with optimize=False to keep every op "
                "as built"
            )
        raise OpNotRunError(
            f"no op named {name!r} ran (it is not needed for the fetches, or the name is "
            f"wrong); ops that ran: {', '.join(o.name for o in self.ops)}"
        )

    def actual(self, name: str) -> str:
        """The device op `name` ran on."""
        return self[name].actual

    @property
    def transfer_count(self) -> int:
        """Tensors sent between devices (control-only edges included)."""
        return len(self.transfers)

    @property
    def transfer_bytes(self) -> int:
        """Bytes sent between devices."""
        return sum(t.bytes or 0 for t in self.transfers)

    @property
    def devices(self) -> list[str]:
        """The devices that ran at least one op."""
        return sorted({op.actual for op in self.ops})

    @property
    def moved(self) -> list[OpPlacement]:
        """Ops that ran somewhere other than requested (soft placement fell back)."""
        return [op for op in self.ops if op.moved]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary of the whole report."""
        return {
            "ops": [asdict(op) | {"moved": op.moved} for op in self.ops],
            "transfers": [asdict(t) for t in self.transfers],
            "transfer_count": self.transfer_count,
            "transfer_bytes": self.transfer_bytes,
            "optimized_away": self.optimized_away,
            "fetched": [asdict(f) for f in self.fetched],
        }

    def to_json(self, path: str | os.PathLike[str] | None = None) -> str:
        """The report as JSON text, also written to `path` (atomically) when given."""
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            write_text(path, text + "\n")
        return text

    def sent_per_op(self) -> tuple[Counter[str], Counter[str]]:
        """Per sending op: transfers out and bytes out."""
        count: Counter[str] = Counter()
        size: Counter[str] = Counter()
        for t in self.transfers:
            op = t.tensor.split(":")[0]
            count[op] += 1
            size[op] += t.bytes or 0
        return count, size

    def to_csv(self, path: str | os.PathLike[str] | None = None) -> str:
        """One row per op (op, type, requested, actual, moved, transfers out, bytes out)."""
        count, size = self.sent_per_op()
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(
            ["op", "type", "requested", "actual", "moved", "transfers_out", "bytes_out"]
        )
        for op in self.ops:
            writer.writerow(
                [
                    op.name,
                    op.op_type,
                    op.requested,
                    op.actual,
                    op.moved,
                    count[op.name],
                    size[op.name],
                ]
            )
        text = buffer.getvalue()
        if path is not None:
            write_text(path, text)
        return text

    def __repr__(self) -> str:
        return (
            f"PlacementReport({plural(len(self.ops), 'op')} on {devices_line(self.devices)}, "
            f"{plural(self.transfer_count, 'transfer')}, {plural(self.transfer_bytes, 'byte')})"
        )

    def table(self, limit: int | None = MAX_ROWS) -> str:
        """A plain-text table: op, type, requested, actual (the first `limit` ops, None for
        all), then a transfers summary."""
        count, _ = self.sent_per_op()
        rows = [
            (
                op.name,
                op.type_shown,
                op.requested or "-",
                op.actual + (" *" if op.moved else ""),
                str(count[op.name] or ""),
            )
            for op in self.ops[:limit]
        ]
        lines = [
            tabulate(
                rows,
                headers=("op", "type", "requested", "actual", "transfers out"),
                disable_numparse=True,
            ),
            *more(len(self.ops), len(rows), "op", "to_csv()"),
        ]
        control = sum(t.control for t in self.transfers)
        moved = plural(len(self.moved), "op")
        lines.append(
            f"{plural(self.transfer_count, 'cross-device transfer')}, "
            f"{plural(self.transfer_bytes, 'byte')}"
            + (f" ({control} control-only, sent by no op above)" if control else "")
            + (f"; {moved} (*) ran elsewhere than requested" if self.moved else "")
        )
        if self.transfers:
            lines.append(
                self.transfers_table(len(self.transfers) if limit is None else MAX_TRANSFER_ROWS)
            )
        if self.fetched:
            lines.append(fetched_line(self.fetched))
        if self.optimized_away:
            away = self.optimized_away
            lines.append(
                f"optimized away by TF: {names(away, len(away) if limit is None else MAX_NAMES)}"
            )
        return "\n".join(lines)

    __str__ = table

    def transfer_rows(self) -> list[tuple[str, str, str, str, str]]:
        """Each tensor that crossed devices as the views show it: (tensor, from, to, bytes,
        the ops that read it)."""
        return [
            (
                t.tensor + (" (control)" if t.control else ""),
                t.source,
                t.destination,
                format_bytes(t.bytes),
                ", ".join(t.consumers) or "-",
            )
            for t in self.transfers
        ]

    def transfers_table(self, limit: int = MAX_TRANSFER_ROWS) -> str:
        """The tensors that crossed devices (`transfer_rows`), the first `limit` of them, then
        how many more (`to_json()` has every one)."""
        rows = self.transfer_rows()[:limit]
        lines = [tabulate(rows, headers=self.TRANSFER_HEADERS, disable_numparse=True)]
        if len(self.transfers) > limit:
            more = plural(len(self.transfers) - limit, "more transfer")
            lines.append(f"... and {more} (to_json() lists every one)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from devplace.views.notebook import placement_html

        return placement_html(self)
