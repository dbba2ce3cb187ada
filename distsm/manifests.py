"""Reading the JSON manifests that describe what distsm wrote to disk (a saved graph, a saved index, a partition
store): files from outside, so their format and version are checked before anything in them is used."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from distsm.errors import short_repr


def read_manifest(path: Path, kind: str, version: int, error: Callable[[str], Exception],
                  what: str) -> dict[str, Any]:
    """The JSON object in ``path`` when its ``format`` is ``kind`` and its ``version`` is ``version``; otherwise
    ``error(problem)`` is raised, ``problem`` naming ``what`` the file should hold (e.g. ``"distsm-graph
    manifest"``) and what it holds instead."""
    try:
        manifest = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise error(f"not valid JSON: {exc}") from None
    found = manifest.get("format") if isinstance(manifest, dict) else None
    if found != kind:
        raise error(f"not a {what} (format {short_repr(found)})")
    if manifest.get("version") != version:
        raise error(f"{what} version {short_repr(manifest.get('version'))} is not supported (this distsm reads "
                    f"version {version})")
    return manifest
