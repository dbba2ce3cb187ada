"""Which worker holds which partition: a stable ``{part: worker name}`` map, resolved to addresses per submit.

Names survive restarts (dask-cuda names a worker after its GPU, LocalCluster numbers them), addresses do not, so
the map keeps names and :meth:`PartOwners.resolve` looks the addresses up each time.  A part whose worker is gone
moves to the surviving worker holding the fewest parts; parts never move while their worker lives.
"""

from __future__ import annotations

from typing import Any

from distsm.cluster.start import ClusterError


def alive_workers(client: Any) -> dict[Any, str]:
    """``{worker name: address}`` of the workers the scheduler knows now."""
    # Asked directly: ``client.scheduler_info()`` returns a cache that the client's periodic refresh (which
    # carries no workers) may overwrite between the fetch and the return.
    info = client.sync(client.scheduler.identity, n_workers=-1)
    return {w.get("name", addr): addr for addr, w in info.get("workers", {}).items()}


class PartOwners:
    """The worker (by name) that holds each of ``parts`` partitions, placed afresh when its worker is gone."""

    def __init__(self, parts: int):
        self.parts = int(parts)
        self.owner: dict[int, Any] = {}

    def resolve(self, client: Any) -> dict[int, str]:
        """``{part: worker address}``, re-placing the parts of workers that have gone."""
        alive = alive_workers(client)
        if not alive:
            raise ClusterError("the cluster has no workers")
        load = {name: 0 for name in alive}
        for name in self.owner.values():
            if name in load:
                load[name] += 1
        for part in range(self.parts):
            if self.owner.get(part) not in alive:
                name = min(load, key=lambda w: (load[w], str(w)))
                self.owner[part] = name
                load[name] += 1
        return {part: alive[self.owner[part]] for part in range(self.parts)}
