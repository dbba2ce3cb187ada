"""Shared machinery of the graph file readers and writers (private).

* :func:`read_bytes`: whole-file input, gzip-aware by file name (output: :mod:`distsm.formats._writing`).
* :func:`lex`: a vectorised (NumPy) tokenizer that turns a file into *records*, one per non-blank,
  non-comment line, with the first :data:`WIDTH` fields of each record parsed as integers.  No Python object
  is made per line, so files with tens of millions of lines parse in seconds.
* :class:`Records`: the tokenizer's output, plus the error helpers that name ``path:line`` of a record.
* :func:`build_graph`: :meth:`Graph.from_edges` with its :class:`GraphError` translated into a
  :class:`GraphFormatError` naming the line of the offending record.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from distsm.errors import GraphError, GraphFormatError, elide, short_repr
from distsm.graph import Graph

PathLike = str | os.PathLike

#: Fields of a record kept as integers (later fields are only counted).
WIDTH = 4

# Field status codes (``Records.status``).
OK = 0  # a non-negative integer
NEG = 1  # a negative integer
NOTINT = 2  # not an integer
BIG = 3  # an integer with more than 18 digits (tokens longer than 19 bytes are NOTINT, whatever they hold)
ABSENT = 4  # the record has no such field

MAX_DIGITS = 18  # 10**18 - 1 < 2**63: any 18-digit number fits int64
_WS = np.zeros(256, bool)
_WS[[9, 10, 11, 12, 13, 32]] = True  # the bytes that bytes.split() splits on
_CHUNK = 1 << 21  # bytes lexed at a time: bounds the temporaries to ~20x this
_ARANGE = np.arange(MAX_DIGITS + 2, dtype=np.int64)


def fspath(path: PathLike) -> str:
    """``os.fspath`` that also accepts ``pathlib.Path`` and friends; the string used in messages."""
    return os.fspath(path)


def is_int_token(tok: bytes, *, allow_negative: bool = False) -> bool:
    """Whether ``tok`` is a decimal integer (ASCII digits, a leading ``-`` when ``allow_negative``)."""
    digits = tok[1:] if allow_negative and tok[:1] == b"-" else tok
    return digits.isdigit() and digits.isascii()


def is_gzip_name(path: PathLike) -> bool:
    """Whether the file name ends in ``.gz`` (the only thing that selects gzip (de)compression)."""
    return fspath(path).lower().endswith(".gz")


def read_bytes(path: PathLike) -> bytes:
    """Return the whole content of ``path``, decompressed when the name ends in ``.gz``.

    Raises:
        OSError: the file cannot be opened (missing, a directory, no permission).
        GraphFormatError: a ``.gz`` file is not valid gzip data (no line number).
    """
    p = fspath(path)
    if not is_gzip_name(p):
        with open(p, "rb") as f:
            return without_bom(f.read())
    try:
        with gzip.open(p, "rb") as f:
            return without_bom(f.read())
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise GraphFormatError(p, None, f"cannot decompress gzip data: {exc}") from exc


#: The UTF-8 byte-order mark some editors put at the start of a text file.
BOM = b"\xef\xbb\xbf"


def without_bom(data: bytes) -> bytes:
    """``data`` with a leading UTF-8 byte-order mark turned into blanks (byte offsets stay where they were)."""
    return b"   " + data[3:] if data.startswith(BOM) else data


# ---------------------------------------------------------------------------------------------------- lexing
@dataclass
class Records:
    """The non-blank, non-comment lines of a file, tokenised.

    Attributes:
        path: the file name used in messages.
        data: the file content.
        start: ``int64[r]`` byte offset of each record's first field in ``data``.
        nfields: ``int32[r]`` number of whitespace-separated fields of each record.
        head: ``uint8[r]`` the first field's byte when that field is a single byte, else 0.
        values: ``int64[r, WIDTH]`` the first ``WIDTH`` fields as integers (meaningful where status is OK/NEG).
        status: ``int8[r, WIDTH]`` one of OK, NEG, NOTINT, BIG, ABSENT per field.
    """

    path: str
    data: bytes
    start: np.ndarray
    nfields: np.ndarray
    head: np.ndarray
    values: np.ndarray
    status: np.ndarray

    def __len__(self) -> int:
        return int(self.start.shape[0])

    def line_of(self, i: int) -> int:
        """1-based line number of record ``i`` (counted on demand: only error paths need it)."""
        return self.data.count(b"\n", 0, int(self.start[i])) + 1

    def text_of(self, i: int) -> bytes:
        """The text of record ``i`` (from its first field to the end of its line, trailing blanks removed)."""
        s = int(self.start[i])
        e = self.data.find(b"\n", s)
        return self.data[s:e if e >= 0 else len(self.data)].rstrip()

    def fields_of(self, i: int) -> list[bytes]:
        """The whitespace-separated fields of record ``i``."""
        return self.text_of(i).split()

    def error(self, i: int, problem: str) -> GraphFormatError:
        """A :class:`GraphFormatError` naming the line of record ``i``."""
        return GraphFormatError(self.path, self.line_of(i), problem)

    def quoted(self, i: int, limit: int = 60) -> str:
        """Record ``i``'s text, quoted and shortened, for messages."""
        t = self.text_of(i).decode("utf-8", "replace")
        if len(t) > limit:
            t = t[:limit - 3] + "..."
        return repr(t)


def token_repr(token: bytes) -> str:
    """A field of the file, quoted for a message and elided when long (a line may hold a 10 MB token)."""
    return short_repr(token.decode("utf-8", "replace"))


def _token_values(b: np.ndarray, starts: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer value and status (OK/NEG/NOTINT/BIG) of each token, one length class at a time.

    Tokens of equal length ``L`` are gathered into an ``(count, L)`` byte block, so the work is proportional
    to the bytes of the tokens.  Tokens longer than 19 bytes are never valid int64 fields here; they are marked
    NOTINT (the diagnosis of a bad record re-reads its text).
    """
    t_count = starts.size
    vals = np.zeros(t_count, np.int64)
    status = np.full(t_count, NOTINT, np.int8)
    if t_count == 0:
        return vals, status
    lclass = np.minimum(length, MAX_DIGITS + 2).astype(np.uint8)
    counts = np.bincount(lclass)
    single = np.count_nonzero(counts) == 1
    by_len = None if single else np.argsort(lclass, kind="stable")  # a radix sort on uint8
    offset = 0
    for L in range(1, min(counts.size, MAX_DIGITS + 2)):
        c = int(counts[L])
        if c == 0:
            continue
        idx = np.arange(t_count) if by_len is None else by_len[offset:offset + c]
        offset += c
        # (L, c): row j holds byte j of every token of length L, so each step below is one contiguous pass.
        blk = b[_ARANGE[:L, None] + starts[idx]]
        d = blk - np.uint8(48)
        isd = d < 10
        tail_digits = np.logical_and.reduce(isd[1:], axis=0) if L >= 2 else np.ones(c, bool)
        alld = tail_digits & isd[0]
        negs = tail_digits & (blk[0] == 45) if L >= 2 else np.zeros(c, bool)
        v = np.where(isd[0], d[0], 0).astype(np.int64)
        for j in range(1, L):
            v *= 10
            v += d[j]
        st = np.full(c, NOTINT, np.int8)
        st[alld] = BIG if L > MAX_DIGITS else OK
        st[negs] = BIG if L - 1 > MAX_DIGITS else NEG
        v[negs] = -v[negs]  # the '-' contributed 0 as a non-digit
        vals[idx] = v
        status[idx] = st
    return vals, status


def _lex_chunk(b: np.ndarray, base: int, out: tuple[np.ndarray, ...], r0: int) -> int:
    """Tokenise one chunk of whole lines into the output arrays from row ``r0``; returns the rows written."""
    ws = _WS[b]
    nonws = ~ws
    st = nonws.copy()
    st[1:] &= ws[:-1]
    en = nonws.copy()
    en[:-1] &= ws[1:]
    del ws, nonws
    starts = np.flatnonzero(st)
    t_count = starts.size
    if t_count == 0:
        return 0
    ends = np.flatnonzero(en) + 1
    del st, en
    # A token starts a record when a newline lies in the gap before it.  Gaps are usually one or two bytes
    # (" ", "\n", "\r\n"): test their ends, and count newlines only in longer gaps.
    newrec = np.empty(t_count, bool)
    newrec[0] = True
    gap_lo = ends[:-1]
    gap_hi = starts[1:]
    np.logical_or(b[gap_lo] == 10, b[gap_hi - 1] == 10, out=newrec[1:])
    long = np.flatnonzero(gap_hi - gap_lo > 2)
    if long.size:
        nlpos = np.flatnonzero(b == 10)
        inner = np.searchsorted(nlpos, gap_hi[long]) > np.searchsorted(nlpos, gap_lo[long])
        newrec[1:][long] |= inner
    first = np.flatnonzero(newrec)
    del newrec, gap_lo, gap_hi
    length = ends - starts
    vals, status = _token_values(b, starts, length)
    # Records: drop comment lines, lay the first WIDTH fields out column by column.
    nf = np.diff(first, append=t_count)
    firstbyte = b[starts[first]]
    keep = np.flatnonzero(firstbyte != 35)  # not '#'
    if keep.size != first.size:
        first, nf, firstbyte = first[keep], nf[keep], firstbyte[keep]
    r = first.size
    o_start, o_nf, o_head, o_vals, o_status = out
    rows = slice(r0, r0 + r)
    o_start[rows] = starts[first] + base
    o_nf[rows] = nf
    o_head[rows] = np.where(length[first] == 1, firstbyte, 0)
    last = t_count - 1
    for j in range(WIDTH):
        idx = np.minimum(first + j, last)
        present = nf > j
        o_vals[rows, j] = np.where(present, vals[idx], 0)
        o_status[rows, j] = np.where(present, status[idx], ABSENT)
    return r


def lex(data: bytes, path: PathLike) -> Records:
    """Tokenise ``data`` (a whole file) into :class:`Records`.

    Blank lines and lines whose first field starts with ``#`` are skipped.  Fields are separated by ASCII
    whitespace (space, tab, CR, VT, FF); lines end at LF (so CRLF files read fine).
    """
    buf = np.frombuffer(data, np.uint8)
    r_max = data.count(b"\n") + 1
    out = (np.empty(r_max, np.int64), np.empty(r_max, np.int32), np.empty(r_max, np.uint8),
           np.empty((r_max, WIDTH), np.int64, order="F"), np.empty((r_max, WIDTH), np.int8, order="F"))
    r = 0
    pos = 0
    total = len(data)
    while pos < total:
        cut = data.find(b"\n", min(pos + _CHUNK, total))
        stop = total if cut < 0 else cut + 1
        r += _lex_chunk(buf[pos:stop], pos, out, r)
        pos = stop
    start, nfields, head, values, status = (a[:r] for a in out)
    return Records(fspath(path), data, start, nfields, head, values, status)


def read_records(path: PathLike) -> Records:
    """:func:`read_bytes` then :func:`lex`."""
    return lex(read_bytes(path), path)


# ---------------------------------------------------------------------------------------------------- checking
@dataclass(frozen=True)
class FieldSpec:
    """How one kind of record looks: its integer fields' names and how many of them may be present."""

    usage: str  # e.g. "v id label [degree]"
    names: tuple[str, ...]  # names of the integer fields, in order
    min_count: int  # fewest integer fields allowed
    skip: int = 1  # leading non-integer fields (the record type letter)
    max_value: tuple[int | None, ...] = ()  # per field: largest allowed value (None = no limit)


def fields_ok(recs: Records, rows: np.ndarray, spec: FieldSpec) -> np.ndarray:
    """Vectorised: whether each record in ``rows`` has the right field count and all-integer, in-range fields."""
    nf = recs.nfields[rows] - spec.skip
    good = (nf >= spec.min_count) & (nf <= len(spec.names))
    for j in range(len(spec.names)):
        col = spec.skip + j
        st = recs.status[rows, col]
        present = nf > j
        good &= ~present | (st == OK)
        limit = spec.max_value[j] if j < len(spec.max_value) else None
        if limit is not None:
            good &= ~present | (recs.values[rows, col] <= limit)
    return good


def diagnose(recs: Records, i: int, spec: FieldSpec) -> GraphFormatError:
    """The error for record ``i`` that :func:`fields_ok` rejected, in words."""
    fields = recs.fields_of(i)[spec.skip:]
    lo, hi = spec.min_count, len(spec.names)
    if not lo <= len(fields) <= hi:
        want = str(lo) if lo == hi else f"{lo} or {hi}" if hi == lo + 1 else f"{lo} to {hi}"
        what = "numbers after the record type" if spec.skip else "fields"
        return recs.error(i, f"wrong field count: expected {want} {what} ({spec.usage}), found {len(fields)} "
                             f"in {recs.quoted(i)}")
    for j, tok in enumerate(fields):
        name = spec.names[j]
        text = tok.decode("utf-8", "replace")
        digits = tok[1:] if tok[:1] == b"-" else tok
        if not (digits.isdigit() and digits.isascii()):
            return recs.error(i, f"{name} {token_repr(tok)} is not an integer (in {recs.quoted(i)})")
        if len(digits) > MAX_DIGITS:
            return recs.error(i, f"{name} {elide(text)} is too large")
        if tok[:1] == b"-":
            return recs.error(i, f"{name} {text} is negative")
        limit = spec.max_value[j] if j < len(spec.max_value) else None
        if limit is not None and int(tok) > limit:
            return recs.error(i, f"{name} {text} is too large (at most {limit})")
    return recs.error(i, f"malformed record {recs.quoted(i)}")  # pragma: no cover - fields_ok agrees


def check_fields(recs: Records, rows: np.ndarray, spec: FieldSpec) -> int | None:
    """Index (into ``recs``) of the first record of ``rows`` that breaks ``spec``, or None."""
    if rows.size == 0:
        return None
    bad = np.flatnonzero(~fields_ok(recs, rows, spec))
    return None if bad.size == 0 else int(rows[bad[0]])


def first_bad(candidates: Sequence[int | None]) -> int | None:
    """The smallest non-None record index (the earliest line), or None."""
    present = [c for c in candidates if c is not None]
    return min(present) if present else None


def check_vertex_ids(recs: Records, v_rows: np.ndarray, ids: np.ndarray, n_declared: int, header: int,
                     header_what: str) -> None:
    """Vertex records must carry ids ``0, 1, 2, ...`` in order, all below ``n_declared``."""
    expect = np.arange(ids.size, dtype=np.int64)
    bad = np.flatnonzero(ids != expect)
    over = np.flatnonzero(ids >= n_declared)
    k = first_bad([int(bad[0]) if bad.size else None, int(over[0]) if over.size else None])
    if k is None:
        return
    vid = int(ids[k])
    hline = recs.line_of(header)
    if vid >= n_declared:
        raise recs.error(int(v_rows[k]), f"vertex id {vid} is out of range: {header_what} on line {hline} "
                                         f"declares {n_declared} vertices (ids 0..{n_declared - 1})")
    earlier = np.flatnonzero(ids[:k] == vid)
    if earlier.size:
        raise recs.error(int(v_rows[k]), f"vertex id {vid} is repeated (first given on line "
                                         f"{recs.line_of(int(v_rows[earlier[0]]))})")
    raise recs.error(int(v_rows[k]), f"vertex id {vid} is out of order: expected vertex {k} "
                                     "(vertex records must list ids 0, 1, 2, ... in order)")


def block_rows(recs: Records, lo: int, hi: int, header: int, n_declared: int,
               header_what: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``v`` and ``e`` records of one graph's block (records ``lo..hi-1`` under ``header``, which declares
    ``n_declared`` vertices): every ``v`` before the first ``e``, ids ``0, 1, 2, ...``, as many as declared."""
    kinds = recs.head[lo:hi]
    v_rows = np.flatnonzero(kinds == ord("v")) + lo
    e_rows = np.flatnonzero(kinds == ord("e")) + lo
    if v_rows.size and e_rows.size and v_rows[-1] > e_rows[0]:
        late = int(v_rows[v_rows > e_rows[0]][0])
        raise recs.error(late, "'v' record after 'e' records: list all vertices before the edges (the first "
                               f"edge of this graph is on line {recs.line_of(int(e_rows[0]))})")
    check_vertex_ids(recs, v_rows, recs.values[v_rows, 1], n_declared, header, header_what)
    if v_rows.size != n_declared:
        raise recs.error(header, f"the header declares {n_declared} vertices but {v_rows.size} 'v' records follow")
    return v_rows, e_rows


def check_endpoints(recs: Records, e_rows: np.ndarray, src: np.ndarray, dst: np.ndarray, n: int,
                    header: int, header_what: str) -> None:
    """Every edge endpoint must be a declared vertex (``< n``)."""
    bad = np.flatnonzero((src >= n) | (dst >= n))
    if bad.size:
        k = int(bad[0])
        w = int(src[k]) if src[k] >= n else int(dst[k])
        raise recs.error(int(e_rows[k]), f"edge {int(src[k])}-{int(dst[k])} names vertex {w}, which is not "
                                         f"declared ({header_what} on line {recs.line_of(header)} declares "
                                         f"{n} vertices, ids 0..{n - 1})")


class Lines(Protocol):
    """Where the rows of a file came from, for messages: :class:`Records` or a fast reader's row map."""

    path: str

    def line_of(self, i: int) -> int: ...

    def error(self, i: int, problem: str) -> GraphFormatError: ...


@dataclass(frozen=True)
class Parsed:
    """A graph as a reader parsed it, with the record each piece came from: edges ``src -> dst`` labelled ``elab``
    (None: unlabelled), vertex labels ``vlab`` (None: unlabelled), the records ``e_rows[i]`` / ``v_rows[i]`` that
    gave edge ``i`` / vertex ``i`` (``v_rows`` None: no vertex records), and ``header``, the record an error naming
    neither is reported at."""

    src: np.ndarray
    dst: np.ndarray
    e_rows: np.ndarray
    header: int
    elab: np.ndarray | None = None
    vlab: np.ndarray | None = None
    v_rows: np.ndarray | None = None


def build_declared(recs: Records, parsed: Parsed, m_declared: int, *, directed: bool, dedupe: bool,
                   n: int) -> Graph:
    """:func:`build_graph` of a block whose header declares ``m_declared`` edges: fewer or more ``e`` records are an
    error unless ``dedupe`` merges repeats down to that many distinct edges."""
    e_rows = parsed.e_rows
    if e_rows.size != m_declared and not dedupe:
        raise recs.error(parsed.header, f"the header declares {m_declared} edges but {e_rows.size} 'e' records "
                                        "follow")
    g = build_graph(recs, parsed, n=n, directed=directed, dedupe=dedupe)
    if e_rows.size != m_declared and g.m != m_declared:
        raise recs.error(parsed.header, f"the header declares {m_declared} edges but {e_rows.size} 'e' records "
                                        f"follow ({g.m} distinct edges)")
    return g


def build_graph(recs: Records, parsed: Parsed, *, n: int | None, directed: bool, dedupe: bool,
                node_ids: np.ndarray | None = None) -> Graph:
    """:meth:`Graph.from_edges` of ``parsed``, with a :class:`GraphError` re-raised as a :class:`GraphFormatError`
    at the record at fault (:func:`located`)."""
    src, dst = parsed.src, parsed.dst
    try:
        return Graph.from_edges(np.column_stack((src, dst)) if src.size else np.zeros((0, 2), np.int64), n=n,
                                edge_labels=parsed.elab, vertex_labels=parsed.vlab, directed=directed,
                                dedupe=dedupe, node_ids=node_ids)
    except GraphError as exc:
        raise located(recs, exc, parsed, directed) from exc


def located(lines: Lines, exc: GraphError, parsed: Parsed, directed: bool) -> GraphFormatError:
    """``exc`` as a :class:`GraphFormatError` at the line of the edge or vertex it names, a repeated edge also
    naming the line of its first copy."""
    if exc.edge_index is not None:
        i = int(exc.edge_index)
        return lines.error(int(parsed.e_rows[i]),
                           exc.message + _first_seen(lines, parsed.src, parsed.dst, parsed.e_rows, i, directed))
    if exc.vertex_index is not None and parsed.v_rows is not None:
        return lines.error(int(parsed.v_rows[int(exc.vertex_index)]), exc.message)
    return lines.error(parsed.header, exc.message)


def _first_seen(lines: Lines, src: np.ndarray, dst: np.ndarray, e_rows: np.ndarray, i: int,
                directed: bool) -> str:
    """`` (first given on line L)`` when edge ``i`` repeats an earlier edge, else ``""``."""
    s, d = int(src[i]), int(dst[i])
    same = (src[:i] == s) & (dst[:i] == d)
    if not directed:
        same |= (src[:i] == d) & (dst[:i] == s)
    j = np.flatnonzero(same)
    return f" (first given on line {lines.line_of(int(e_rows[j[0]]))})" if j.size else ""


def only_graph(recs: Records, segments: Sequence[tuple], starts: str) -> tuple:
    """The single segment of a one-graph read; several graphs are an error at the second one's first line.

    ``starts`` names the record that starts a graph in this format (for the message).
    """
    if len(segments) > 1:
        raise recs.error(segments[1][0], f"the file holds {len(segments)} graphs (each {starts} record starts "
                                         "one); read it with read_graphs()")
    return segments[0]


@dataclass(frozen=True)
class Segmented:
    """A format whose files hold graphs one after another: ``segments(recs)`` finds them, ``build(recs, *segment,
    directed=, dedupe=)`` builds one, and ``starts`` names the record that starts one (see :func:`only_graph`)."""

    segments: Callable[[Records], Sequence[tuple]]
    build: Callable[..., Graph]
    starts: str

    def one(self, path: PathLike, directed: bool, dedupe: bool | None) -> Graph:
        """The file's single graph (several are an error)."""
        recs = read_records(path)
        return self.build(recs, *only_graph(recs, self.segments(recs), self.starts), directed=directed,
                          dedupe=bool(dedupe))

    def every(self, path: PathLike, directed: bool, dedupe: bool | None) -> list[Graph]:
        """Every graph of the file, in file order."""
        recs = read_records(path)
        return [self.build(recs, *seg, directed=directed, dedupe=bool(dedupe)) for seg in self.segments(recs)]
