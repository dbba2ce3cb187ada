"""The scheduler's ``/distsm/status`` JSON route (enabled by adding this module to
``distributed.scheduler.http.routes``; distsm does so for the clusters it starts)."""

from __future__ import annotations

import json
from typing import Any

from distributed.http.utils import RequestHandler

from distsm.cluster.monitor import PLUGIN_NAME


class StatusHandler(RequestHandler):
    def get(self) -> None:
        plugin = self.server.plugins.get(PLUGIN_NAME)
        body = plugin.status() if plugin is not None else {"totals": {}, "batches": [],
                                                            "note": "no distsm client has connected yet"}
        self.set_header("Content-Type", "application/json")
        self.write(json.dumps(body))


routes: list[tuple[str, type[RequestHandler], dict[str, Any]]] = [(r"/distsm/status", StatusHandler, {})]
