"""A small SPARQL subset: ``PREFIX``/``BASE``, ``SELECT [DISTINCT|REDUCED] ?v ... | *``, one basic graph pattern
(``WHERE { s p o . ... }`` with ``;`` and ``,`` lists and ``a`` for ``rdf:type``), ``LIMIT`` and ``OFFSET``.

Subjects and objects may be variables, blank nodes (non-distinguished variables), IRIs (full or prefixed) or
literals (quoted with optional ``@lang``/``^^type``; integers, decimals, doubles and booleans as in SPARQL);
predicates must be constant IRIs.  Anything else (FILTER, OPTIONAL, UNION, property paths, variable
predicates, ...) is refused with :class:`SparqlSyntaxError`, never silently ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import cast
from urllib.parse import urljoin

from distsm.errors import short_repr
from distsm.rdf.ntriples import RDF_TYPE, _unescape, literal

XSD = "http://www.w3.org/2001/XMLSchema#"


class SparqlSyntaxError(ValueError):
    """The query text is not in the supported SPARQL subset.

    ``line`` and ``column`` (1-based, None when the problem has no one place) say where; ``problem`` says why;
    the message is ``"line L, column C: problem"``.
    """

    def __init__(self, problem: str, line: int | None = None, column: int | None = None):
        self.problem, self.line, self.column = problem, line, column
        super().__init__(problem if line is None else f"line {line}, column {column}: {problem}")


#: Parts of SPARQL outside the subset, named in errors (a word token's upper case -> the feature's name).
UNSUPPORTED = {
    "FILTER": "FILTER", "OPTIONAL": "OPTIONAL", "UNION": "UNION", "MINUS": "MINUS", "BIND": "BIND",
    "VALUES": "VALUES", "GRAPH": "GRAPH", "SERVICE": "SERVICE", "ORDER": "ORDER BY", "GROUP": "GROUP BY",
    "HAVING": "HAVING", "CONSTRUCT": "CONSTRUCT", "ASK": "ASK", "DESCRIBE": "DESCRIBE", "FROM": "FROM",
    "INSERT": "INSERT", "DELETE": "DELETE", "LOAD": "LOAD", "CLEAR": "CLEAR",
}
_SUBSET = "supported: PREFIX, BASE, SELECT [DISTINCT], one basic graph pattern with IRI predicates, LIMIT, OFFSET"


def _position(text: str, pos: int) -> tuple[int, int]:
    """1-based (line, column) of offset ``pos`` in ``text``."""
    line_start = text.rfind("\n", 0, pos) + 1
    return text.count("\n", 0, pos) + 1, pos - line_start + 1


def _unsupported(text: str, word: str, pos: int) -> SparqlSyntaxError:
    return SparqlSyntaxError(f"{UNSUPPORTED[word.upper()]} is not supported ({_SUBSET})", *_position(text, pos))


@dataclass(frozen=True)
class Var:
    """A query variable; ``name`` without the ``?``.  Blank nodes become ``Var('_:label', blank=True)``."""

    name: str
    blank: bool = False

    def __str__(self) -> str:
        return self.name if self.blank else f"?{self.name}"


Term = Var | str  # a constant is its canonical N-Triples string


@dataclass
class Query:
    """A parsed SELECT query over one basic graph pattern."""

    patterns: list[tuple[Term, str, Term]]
    select: list[str] | None  # variable names; None for ``*``
    distinct: bool = False
    limit: int | None = None
    offset: int = 0
    prefixes: dict[str, str] = field(default_factory=dict)

    @property
    def variables(self) -> list[str]:
        """Names of the named variables in order of first appearance."""
        seen: dict[str, None] = {}
        for s, _, o in self.patterns:
            for t in (s, o):
                if isinstance(t, Var) and not t.blank:
                    seen.setdefault(t.name, None)
        return list(seen)

    @property
    def projection(self) -> list[str]:
        return self.variables if self.select is None else list(self.select)


_TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<str>"(?:[^"\\\n\r]|\\.)*"|'(?:[^'\\\n\r]|\\.)*')
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<dtype>\^\^)
  | (?P<var>[?$][A-Za-z0-9_\u00B7\u00C0-\uFFFF]+)
  | (?P<bnode>_:[A-Za-z0-9_\u00C0-\uFFFF](?:[A-Za-z0-9_\-.\u00B7\u00C0-\uFFFF]*[A-Za-z0-9_\-\u00B7\u00C0-\uFFFF])?)
  | (?P<num>[+-]?(?:[0-9]+\.[0-9]*[eE][+-]?[0-9]+|\.?[0-9]+[eE][+-]?[0-9]+|[0-9]*\.[0-9]+|[0-9]+))
  | (?P<pname>(?:[A-Za-z\u00C0-\uFFFF](?:[A-Za-z0-9_\-.\u00B7\u00C0-\uFFFF]*[A-Za-z0-9_\-\u00B7\u00C0-\uFFFF])?)?
        :(?:[A-Za-z0-9_:\u00C0-\uFFFF](?:[A-Za-z0-9_\-.:\u00B7\u00C0-\uFFFF]*[A-Za-z0-9_\-:\u00B7\u00C0-\uFFFF])?)?)
  | (?P<word>[A-Za-z]+)
  | (?P<punct>[{}.;,*()])
""", re.VERBOSE)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            # Name the construct the stray character belongs to: FILTER(!bound(?x)) is about FILTER, not '!'.
            for kind, word, at in reversed(out):
                if kind == "word" and word.upper() in UNSUPPORTED:
                    raise _unsupported(text, word, at)
            if text[pos] in "/|^":
                raise SparqlSyntaxError(f"property paths are not supported ({_SUBSET})", *_position(text, pos))
            raise SparqlSyntaxError(f"unexpected character {text[pos]!r}", *_position(text, pos))
        kind = cast(str, m.lastgroup)  # every alternative of the token pattern is a named group
        if kind != "ws":
            out.append((kind, m.group(), pos))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.prefixes: dict[str, str] = {}
        self.base = ""

    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i] if self.i < len(self.toks) else ("eof", "", -1)

    def next(self) -> tuple[str, str, int]:
        t = self.peek()
        self.i += 1
        return t

    def error(self, problem: str, pos: int | None = None) -> SparqlSyntaxError:
        """An error at ``pos`` (default: the last token read, or the end of the query)."""
        if pos is None:
            pos = self.toks[self.i - 1][2] if 0 < self.i <= len(self.toks) else len(self.text)
        return SparqlSyntaxError(problem, *_position(self.text, pos))

    def fail(self, what: str) -> SparqlSyntaxError:
        kind, text, pos = self.peek()
        if kind == "eof":
            return self.error(f"expected {what}, found the end of the query", len(self.text))
        if kind == "word" and text.upper() in UNSUPPORTED:
            return _unsupported(self.text, text, pos)
        return self.error(f"expected {what}, found {short_repr(text)}", pos)

    def keyword(self, word: str) -> bool:
        kind, text, _ = self.peek()
        if kind == "word" and text.upper() == word:
            self.i += 1
            return True
        return False

    def punct(self, p: str) -> bool:
        kind, text, _ = self.peek()
        if kind == "punct" and text == p:
            self.i += 1
            return True
        return False

    def expect(self, p: str) -> None:
        if not self.punct(p):
            raise self.fail(repr(p))

    def iri_text(self, kind: str, text: str) -> str:
        if kind == "iri":
            value = _unescape(text[1:-1])
            return urljoin(self.base, value) if self.base and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", value) \
                else value
        prefix, _, local = text.partition(":")
        if prefix not in self.prefixes:
            raise self.error(f"undeclared prefix {prefix + ':'!r} in {short_repr(text)}")
        local = re.sub(r"\\([_~.\-!$&'()*+,;=/?#@%])", r"\1", local)
        return self.prefixes[prefix] + local

    def query(self) -> Query:
        while True:
            if self.keyword("PREFIX"):
                kind, text, _ = self.next()
                if kind != "pname" or not text.endswith(":") or text.count(":") != 1:
                    raise self.error(f"expected a prefix name like 'ub:' after PREFIX, found {short_repr(text)}")
                k2, t2, _ = self.next()
                if k2 != "iri":
                    raise self.error(f"expected <iri> after PREFIX {text}, found {short_repr(t2)}")
                self.prefixes[text[:-1]] = self.iri_text(k2, t2)
            elif self.keyword("BASE"):
                k2, t2, _ = self.next()
                if k2 != "iri":
                    raise self.error(f"expected <iri> after BASE, found {short_repr(t2)}")
                self.base = self.iri_text(k2, t2)
            else:
                break
        if not self.keyword("SELECT"):
            raise self.fail("SELECT (only SELECT queries are supported)")
        distinct = self.keyword("DISTINCT")
        if not distinct:
            self.keyword("REDUCED")  # REDUCED permits but does not require removing duplicates: keep them
        select: list[str] | None
        if self.punct("*"):
            select = None
        else:
            select = []
            while self.peek()[0] == "var":
                select.append(self.next()[1][1:])
            if not select:
                raise self.fail("'*' or variables after SELECT")
        self.keyword("WHERE")
        self.expect("{")
        patterns: list[tuple[Term, str, Term]] = []
        while not self.punct("}"):
            subj = self.term("subject")
            self.predicate_objects(subj, patterns)
            if self.punct("}"):
                break
            self.expect(".")
        limit, offset = None, 0
        while True:
            if self.keyword("LIMIT"):
                limit = self.integer("LIMIT")
            elif self.keyword("OFFSET"):
                offset = self.integer("OFFSET")
            else:
                break
        if self.peek()[0] != "eof":
            raise self.fail("end of query (only one basic graph pattern, LIMIT and OFFSET are supported)")
        if not patterns:
            raise self.error("the WHERE clause has no triple patterns")
        q = Query(patterns, select, distinct, limit, offset, dict(self.prefixes))
        names = set(q.variables)
        for v in select or ():
            if v not in names:
                raise SparqlSyntaxError(f"selected variable ?{v} does not occur in the WHERE clause")
        return q

    def integer(self, what: str) -> int:
        kind, text, _ = self.next()
        if kind != "num" or not text.isdigit():
            raise self.error(f"expected a non-negative integer after {what}, found {short_repr(text)}")
        return int(text)

    def predicate_objects(self, subj: Term, out: list[tuple[Term, str, Term]]) -> None:
        while True:
            kind, text, at = self.peek()
            if kind == "word" and text == "a":
                self.i += 1
                pred = RDF_TYPE
            elif kind in ("iri", "pname"):
                self.i += 1
                pred = f"<{self.iri_text(kind, text)}>"
            elif kind == "var":
                raise self.error(f"variable predicate {text} is not supported (predicates must be IRIs)", at)
            else:
                raise self.fail("a predicate IRI")
            while True:
                out.append((subj, pred, self.term("object")))
                if not self.punct(","):
                    break
            if not self.punct(";"):
                return
            kind, text, _ = self.peek()
            if kind == "punct" and text in ".}":
                return

    def term(self, role: str) -> Term:
        kind, text, _ = self.next()
        if kind == "var":
            return Var(text[1:])
        if kind == "bnode":
            return Var(text, blank=True)
        if kind in ("iri", "pname"):
            return f"<{self.iri_text(kind, text)}>"
        if kind == "str":
            if role == "subject":
                raise self.error(f"a literal cannot be a subject: {short_repr(text)}")
            lex = _unescape(text[1:-1])
            if self.peek()[0] == "lang":
                return literal(lex, lang=self.next()[1][1:])
            if self.peek()[0] == "dtype":
                self.i += 1
                k2, t2, _ = self.next()
                if k2 not in ("iri", "pname"):
                    raise self.error(f"expected a datatype IRI after ^^, found {short_repr(t2)}")
                return literal(lex, datatype=self.iri_text(k2, t2))
            return literal(lex)
        if kind == "num":
            dt = "double" if "e" in text.lower() else "decimal" if "." in text else "integer"
            return literal(text, datatype=XSD + dt)
        if kind == "word" and text in ("true", "false"):
            return literal(text, datatype=XSD + "boolean")
        self.i -= 1
        raise self.fail(f"a {role} (variable, IRI or literal)")


def parse_sparql(text: str) -> Query:
    """Parse the supported SPARQL subset (a leading byte-order mark is ignored); raises
    :class:`SparqlSyntaxError`."""
    return _Parser(text.removeprefix("\ufeff")).query()
