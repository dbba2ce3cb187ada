"""The format registry: every graph file format is one module that registers itself here.

A format module decorates its detector with :func:`register_format`, naming its readers and writers (its
:class:`Codec`); the
package's :func:`~distsm.formats.read_graph`, :func:`~distsm.formats.write_graph`, format detection and the CLI's
``--format`` choices all read the registry, so adding a format touches no other file (``distsm/formats/__init__.py``
imports every module of the package).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from distsm.formats._common import PathLike
from distsm.graph import Graph

Detector = Callable[[list[bytes]], bool]
Reader = Callable[..., Graph]
GraphsReader = Callable[..., list[Graph]]
Writer = Callable[[Graph, PathLike], None]
GraphsWriter = Callable[[Iterable[Graph], PathLike], None]


@dataclass(frozen=True)
class Codec:
    """How a format's files are read and written (see :class:`Format` for each function's call)."""

    read: Reader
    write: Writer
    read_all: GraphsReader | None = None
    write_all: GraphsWriter | None = None


@dataclass(frozen=True)
class Format:
    """One registered format.

    Attributes:
        name: the ``format=`` value (``"sm"``).
        title: how messages name it (``"SNAP edge list"``).
        first_line: the first meaningful line detection expects, as messages quote it (``"'t N M'"``).
        directed: whether edges are read as arcs when the caller does not say.
        detect: whether a file's first line that is neither blank nor a ``#`` comment, split into fields, is
            this format's.  Detectors of different formats accept disjoint lines.
        read: ``read(path, *, directed, dedupe) -> Graph``, the file's only graph.
        read_all: ``read_all(path, *, directed, dedupe) -> list[Graph]`` (None: the file holds one graph).
        write: ``write(graph, path)``.
        write_all: ``write_all(graphs, path)`` (None: the format holds one graph per file).
        magic: the bytes a binary file of this format starts with (None: a text format).
        suffix: the file name ending that names this format whatever the content (None: none).
    """

    name: str
    title: str
    first_line: str
    directed: bool
    detect: Detector
    read: Reader
    read_all: GraphsReader | None
    write: Writer
    write_all: GraphsWriter | None
    magic: bytes | None = None
    suffix: str | None = None

    def read_graphs(self, path: PathLike, *, directed: bool, dedupe: bool | None) -> list[Graph]:
        """Every graph of ``path``, in file order."""
        if self.read_all is None:
            return [self.read(path, directed=directed, dedupe=dedupe)]
        return self.read_all(path, directed=directed, dedupe=dedupe)


_REGISTRY: dict[str, Format] = {}


def register_format(name: str, *, title: str, first_line: str, directed: bool, codec: Codec,
                    magic: bytes | None = None, suffix: str | None = None) -> Callable[[Detector], Detector]:
    """Register the format ``name``, read and written by ``codec``; decorates its detector (see :class:`Format` for
    the arguments), which it returns unchanged.

    Raises:
        ValueError: ``name`` is registered already (two modules would claim the same ``format=`` value).
    """

    def decorate(detect: Detector) -> Detector:
        if name in _REGISTRY:
            raise ValueError(f"graph format {name!r} is registered twice")
        _REGISTRY[name] = Format(name, title, first_line, directed, detect, codec.read, codec.read_all, codec.write,
                                 codec.write_all, magic, suffix)
        return detect

    return decorate


def registered() -> tuple[Format, ...]:
    """The registered formats, in registration order."""
    return tuple(_REGISTRY.values())


def lookup(name: str) -> Format | None:
    """The format registered as ``name``, or None."""
    return _REGISTRY.get(name) if isinstance(name, str) else None
