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
from urllib.parse import urljoin

from distsm.rdf.ntriples import RDF_TYPE, _unescape, literal

XSD = "http://www.w3.org/2001/XMLSchema#"


class SparqlSyntaxError(ValueError):
    """The query text is not in the supported SPARQL subset; the message says where and why."""


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
    out = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise SparqlSyntaxError(f"unexpected character {text[pos]!r} at offset {pos}")
        kind = m.lastgroup
        if kind != "ws":
            out.append((kind, m.group(), pos))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str):
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

    def fail(self, what: str) -> SparqlSyntaxError:
        kind, text, pos = self.peek()
        where = "end of query" if kind == "eof" else f"{text!r} at offset {pos}"
        return SparqlSyntaxError(f"expected {what}, found {where}")

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
            raise SparqlSyntaxError(f"undeclared prefix {prefix + ':'!r} in {text!r}")
        local = re.sub(r"\\([_~.\-!$&'()*+,;=/?#@%])", r"\1", local)
        return self.prefixes[prefix] + local

    def query(self) -> Query:
        while True:
            if self.keyword("PREFIX"):
                kind, text, _ = self.next()
                if kind != "pname" or not text.endswith(":") or text.count(":") != 1:
                    raise SparqlSyntaxError(f"expected a prefix name like 'ub:' after PREFIX, found {text!r}")
                k2, t2, _ = self.next()
                if k2 != "iri":
                    raise SparqlSyntaxError(f"expected <iri> after PREFIX {text}, found {t2!r}")
                self.prefixes[text[:-1]] = self.iri_text(k2, t2)
            elif self.keyword("BASE"):
                k2, t2, _ = self.next()
                if k2 != "iri":
                    raise SparqlSyntaxError(f"expected <iri> after BASE, found {t2!r}")
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
            raise SparqlSyntaxError("the WHERE clause has no triple patterns")
        q = Query(patterns, select, distinct, limit, offset, dict(self.prefixes))
        names = set(q.variables)
        for v in select or ():
            if v not in names:
                raise SparqlSyntaxError(f"selected variable ?{v} does not occur in the WHERE clause")
        return q

    def integer(self, what: str) -> int:
        kind, text, _ = self.next()
        if kind != "num" or not text.isdigit():
            raise SparqlSyntaxError(f"expected a non-negative integer after {what}, found {text!r}")
        return int(text)

    def predicate_objects(self, subj: Term, out: list[tuple[Term, str, Term]]) -> None:
        while True:
            kind, text, _ = self.peek()
            if kind == "word" and text == "a":
                self.i += 1
                pred = RDF_TYPE
            elif kind in ("iri", "pname"):
                self.i += 1
                pred = f"<{self.iri_text(kind, text)}>"
            elif kind == "var":
                raise SparqlSyntaxError(f"variable predicate {text} is not supported (predicates must be IRIs)")
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
                raise SparqlSyntaxError(f"a literal cannot be a subject: {text}")
            lex = _unescape(text[1:-1])
            if self.peek()[0] == "lang":
                return literal(lex, lang=self.next()[1][1:])
            if self.peek()[0] == "dtype":
                self.i += 1
                k2, t2, _ = self.next()
                if k2 not in ("iri", "pname"):
                    raise SparqlSyntaxError(f"expected a datatype IRI after ^^, found {t2!r}")
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
    """Parse the supported SPARQL subset; raises :class:`SparqlSyntaxError`."""
    return _Parser(text).query()
