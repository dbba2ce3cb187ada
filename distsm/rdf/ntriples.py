"""A streaming N-Triples reader that dictionary-encodes an RDF graph.

Terms are kept as canonical strings in N-Triples syntax, which is also how results are decoded:

* IRIs: ``<http://example.org/a>`` (``\\u``/``\\U`` escapes resolved);
* blank nodes: ``_:label`` (labels are file-scoped, kept as written);
* literals: ``"lexical"``, ``"lexical"@lang`` (language tag lower-cased) or ``"lexical"^^<datatype>``.  The
  lexical form is unescaped and re-escaped canonically (``\\\\``, ``\\"``, ``\\n``, ``\\r``), so two spellings of
  the same string are one term.  Literals are compared as terms (``"1"^^xsd:integer`` and ``"01"^^xsd:integer``
  differ, and a plain literal differs from an explicit ``^^xsd:string`` one), as in rdflib's BGP matching.

Repeated identical triples are merged (RDF graphs are sets).  A malformed line raises
:class:`~distsm.errors.GraphFormatError` naming the file and the line.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from array import array
from collections.abc import Iterable, Iterator
from typing import IO, cast

import numpy as np

from distsm.errors import GraphFormatError, short_repr

RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"

_IRI = r"<([^<>\"{}|^`\\\x00-\x20]*(?:\\[uU][0-9A-Fa-f]{4,8}[^<>\"{}|^`\\\x00-\x20]*)*)>"
_BNODE = r"_:([A-Za-z0-9_\u00C0-\uFFFF](?:[A-Za-z0-9_\-.\u00B7\u00C0-\uFFFF]*[A-Za-z0-9_\-\u00B7\u00C0-\uFFFF])?)"
_LIT = r"\"((?:[^\"\\\n\r]|\\.)*)\"(?:@([A-Za-z]+(?:-[A-Za-z0-9]+)*)|\^\^" + _IRI + r")?"
_LINE = re.compile(
    r"[ \t]*(?:" + _IRI + "|" + _BNODE + r")[ \t]*" + _IRI + r"[ \t]*(?:" + _IRI + "|" + _BNODE + "|" + _LIT
    + r")[ \t]*\.[ \t]*(?:#.*)?$")
_BLANK = re.compile(r"[ \t]*(?:#.*)?$")
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[tbnrf\"'\\])")
_SIMPLE = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text

    def sub(m: re.Match[str]) -> str:
        e = m.group(1)
        if e[0] in "uU":
            return chr(int(e[1:], 16))
        return _SIMPLE[e]

    out = _ESCAPE.sub(sub, text)
    return out


def _check_escapes(text: str) -> bool:
    """Whether every backslash in ``text`` starts a valid escape."""
    return "\\" not in _ESCAPE.sub("", text)


def escape_lexical(text: str) -> str:
    """The canonical escaped form of a literal's lexical text."""
    if not any(c in text for c in '\\"\n\r'):
        return text
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")


def iri(value: str) -> str:
    """Canonical form of the IRI ``value``."""
    return f"<{value}>"


def literal(lexical: str, lang: str | None = None, datatype: str | None = None) -> str:
    """Canonical form of a literal (``datatype`` is a bare IRI, without angle brackets)."""
    base = f'"{escape_lexical(lexical)}"'
    if lang:
        return f"{base}@{lang.lower()}"
    if datatype:
        return f"{base}^^<{datatype}>"
    return base


class Dictionary:
    """A bijection between terms (canonical strings) and dense ids ``0..len-1`` in order of first sight."""

    __slots__ = ("terms", "ids")

    def __init__(self, terms: Iterable[str] = ()):
        self.terms: list[str] = []
        self.ids: dict[str, int] = {}
        for t in terms:
            self.add(t)

    def add(self, term: str) -> int:
        i = self.ids.get(term)
        if i is None:
            i = self.ids[term] = len(self.terms)
            self.terms.append(term)
        return i

    def get(self, term: str) -> int | None:
        return self.ids.get(term)

    def decode(self, i: int) -> str:
        return self.terms[i]

    def __len__(self) -> int:
        return len(self.terms)

    def __contains__(self, term: object) -> bool:
        return term in self.ids


def _open_binary(path: str | os.PathLike) -> IO[bytes]:
    p = os.fspath(path)
    return cast(IO[bytes], gzip.open(p, "rb")) if p.endswith(".gz") else open(p, "rb")


def parse_line(line: str) -> tuple[str, str, str] | None:
    """The canonical ``(subject, predicate, object)`` of one N-Triples line; None for blank/comment lines.

    Raises ValueError (with the problem) for a malformed line.
    """
    m = _LINE.match(line)
    if m is None:
        if _BLANK.match(line):
            return None
        raise ValueError(f"not an N-Triples statement: {short_repr(line.strip())}")
    s_iri, s_bn, p_iri, o_iri, o_bn, lex, lang, dt = m.groups()
    for part in (s_iri, p_iri, o_iri, lex, dt):
        if part is not None and not _check_escapes(part):
            raise ValueError("invalid escape sequence")
    s = f"<{_unescape(s_iri)}>" if s_iri is not None else f"_:{s_bn}"
    p = f"<{_unescape(p_iri)}>"
    if o_iri is not None:
        o = f"<{_unescape(o_iri)}>"
    elif o_bn is not None:
        o = f"_:{o_bn}"
    else:
        o = literal(_unescape(lex), lang, None if dt is None else _unescape(dt))
    return s, p, o


def iter_triples(source: str | os.PathLike | Iterable[str], *, name: str | None = None) -> Iterator[tuple[str, str,
                                                                                                         str]]:
    """Stream canonical triples from a file path (``.gz`` by name) or an iterable of lines."""
    if isinstance(source, (str, os.PathLike)):
        label = os.fspath(source)
        try:
            fh = _open_binary(source)
        except OSError as e:
            raise GraphFormatError(label, None, f"cannot open: {e.strerror or e}") from e
        close = True
    else:
        fh, label, close = source, name, False  # type: ignore[assignment]
    try:
        for lineno, raw in enumerate(fh, 1):
            if isinstance(raw, bytes):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise GraphFormatError(label, lineno, f"not UTF-8 text ({e.reason})") from None
            else:
                line = raw
            if lineno == 1:
                line = line.removeprefix("\ufeff")  # a byte-order mark some editors write
            try:
                t = parse_line(line.rstrip("\r\n"))
            except ValueError as e:
                raise GraphFormatError(label, lineno, str(e)) from None
            if t is not None:
                yield t
    except (OSError, EOFError, zlib.error) as e:  # e.g. a truncated or corrupt .gz
        raise GraphFormatError(label, None, f"cannot read: {e}") from None
    finally:
        if close:
            fh.close()


def encode_triples(triples: Iterable[tuple[str, str, str]]) -> tuple[Dictionary, Dictionary, np.ndarray]:
    """Dictionary-encode triples: (entity dictionary, predicate dictionary, ``int64[m, 3]`` unique (s, p, o))."""
    ent, pred = Dictionary(), Dictionary()
    buf = array("q")
    add_e, add_p = ent.add, pred.add
    for s, p, o in triples:
        buf.append(add_e(s))
        buf.append(add_p(p))
        buf.append(add_e(o))
    spo = np.frombuffer(buf, dtype=np.int64).reshape(-1, 3) if len(buf) else np.zeros((0, 3), np.int64)
    if spo.shape[0]:
        spo = np.unique(spo, axis=0)
    return ent, pred, spo
