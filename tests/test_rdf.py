"""RDF / SPARQL BGP support: the N-Triples reader, the SPARQL subset, and answers equal to rdflib's."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import numpy as np
import pytest
import rdflib
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled

from distsm.errors import GraphFormatError
from distsm.rdf import RDF_TYPE, RDFGraph, SparqlSyntaxError, evaluate, parse_line, parse_sparql, read_ntriples
from distsm.rdf import lubm


# ---------------------------------------------------------------- helpers
def canon(t) -> str:
    """rdflib term -> distsm's canonical N-Triples string."""
    from distsm.rdf.ntriples import literal

    if isinstance(t, rdflib.URIRef):
        return f"<{t}>"
    if isinstance(t, rdflib.BNode):
        return f"_:{t}"
    assert isinstance(t, rdflib.Literal)
    return literal(str(t), t.language, None if t.datatype is None else str(t.datatype))


def nt_text(triples) -> str:
    return "".join(f"{s} {p} {o} .\n" for s, p, o in triples)


def rdflib_rows(nt: str, query: str, variables: list[str]) -> list[tuple[str, ...]]:
    g = rdflib.Graph()
    g.parse(data=nt, format="nt")
    out = []
    for row in g.query(query):
        d = row.asdict()
        out.append(tuple(canon(d[v]) for v in variables))
    return out


def ours(triples, query: str, **kw) -> tuple[list[str], list[tuple[str, ...]]]:
    fold = kw.pop("fold_types", False)
    g = RDFGraph.from_triples(triples, fold_types=fold)
    r = evaluate(g, query, **kw)
    return r.variables, r.decoded()


# ---------------------------------------------------------------- N-Triples reader
def test_parse_line_terms():
    assert parse_line('<http://a> <http://p> "x\\ty\\u00e9"@EN-gb . # c') == (
        "<http://a>", "<http://p>", '"x\ty\u00e9"@en-gb')
    assert parse_line("_:b1 <p> <o\\u0041>.") == ("_:b1", "<p>", "<oA>")
    assert parse_line('<s> <p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .')[2] == \
        '"1"^^<http://www.w3.org/2001/XMLSchema#integer>'
    assert parse_line('<s> <p> "a\\"b\\\\" .')[2] == '"a\\"b\\\\"'
    assert parse_line("   # only a comment") is None
    assert parse_line("") is None


@pytest.mark.parametrize("line", ['<s> <p> <o>', '"lit" <p> <o> .', '<s> _:p <o> .', '<s> <p> "unterminated .',
                                  '<s> <p> <o> . extra', '<s> <p> "bad \\q escape" .', '<s p> <p> <o> .'])
def test_malformed_line_names_file_and_line(tmp_path, line):
    f = tmp_path / "bad.nt"
    f.write_text("<a> <b> <c> .\n\n" + line + "\n")
    with pytest.raises(GraphFormatError) as e:
        read_ntriples(f)
    assert e.value.line == 3 and str(f) in str(e.value)


def test_duplicates_merged_gzip_and_parallel_predicates(tmp_path):
    text = "<a> <p> <b> .\n<a> <p> <b> .\n<a> <q> <b> .\n<a> <p> <a> .\n<a> <r> \"b\" .\n"
    f = tmp_path / "g.nt.gz"
    with gzip.open(f, "wt") as fh:
        fh.write(text)
    g = read_ntriples(f)
    assert g.m == 4 and g.n == 3 and len(g.predicates) == 3
    assert sorted(evaluate(g, "SELECT * WHERE { ?x <p> ?y . ?x <q> ?y }").decoded()) == [("<a>", "<b>")]
    assert evaluate(g, "SELECT * WHERE { ?x <p> ?x }").decoded() == [("<a>",)]
    # homomorphic: ?x and ?y may bind the same node (through the self loop)
    assert sorted(evaluate(g, "SELECT * WHERE { ?x <p> ?y }").decoded()) == [("<a>", "<a>"), ("<a>", "<b>")]
    assert evaluate(g, "SELECT * WHERE { ?x <p> ?y }", isomorphic=True).decoded() == [("<a>", "<b>")]


def test_missing_file_is_a_format_error(tmp_path):
    with pytest.raises(GraphFormatError):
        read_ntriples(tmp_path / "nope.nt")


# ---------------------------------------------------------------- SPARQL subset
def test_parse_sparql_forms():
    q = parse_sparql("PREFIX ex: <http://e/> SELECT DISTINCT ?x WHERE { ?x a ex:C ; ex:p ?y , 5 . _:b ex:q ?x } "
                     "LIMIT 3 OFFSET 1")
    assert q.distinct and q.limit == 3 and q.offset == 1 and q.select == ["x"]
    assert len(q.patterns) == 4 and q.patterns[0][1] == RDF_TYPE
    assert q.variables == ["x", "y"]


@pytest.mark.parametrize("text", ["SELECT ?x WHERE { ?x ?p ?y }", "SELECT ?x WHERE { ?x <p> ?y FILTER(?y) }",
                                  "SELECT ?z WHERE { ?x <p> ?y }", "SELECT ?x WHERE { ?x u:p ?y }",
                                  "ASK { ?x <p> ?y }", "SELECT ?x WHERE { }", "SELECT ?x WHERE { ?x <p> ?y } junk"])
def test_unsupported_sparql_is_refused(text):
    with pytest.raises(SparqlSyntaxError):
        parse_sparql(text)


def test_disconnected_bgp_cross_product_and_constants():
    triples = [("<a>", "<p>", "<b>"), ("<c>", "<p>", "<d>"), ("<a>", "<q>", '"x"')]
    vs, rows = ours(triples, 'SELECT ?x ?y WHERE { ?x <p> ?u . ?y <q> "x" }')
    assert Counter(rows) == Counter([("<a>", "<a>"), ("<c>", "<a>")])
    assert ours(triples, "SELECT ?x WHERE { ?x <p> <zzz> }")[1] == []
    assert ours(triples, "SELECT ?x WHERE { ?x <nope> ?y }")[1] == []
    assert Counter(ours(triples, "SELECT ?u WHERE { ?x <p> ?u . ?y <p> ?w }")[1]) == Counter(
        [("<b>",), ("<b>",), ("<d>",), ("<d>",)])  # bag semantics: duplicates kept
    assert Counter(ours(triples, "SELECT DISTINCT ?u WHERE { ?x <p> ?u . ?y <p> ?w }")[1]) == Counter(
        [("<b>",), ("<d>",)])


def test_fold_types_type_sets():
    t = RDF_TYPE
    triples = [("<a>", t, "<A>"), ("<a>", t, "<B>"), ("<b>", t, "<A>"), ("<a>", "<p>", "<b>"), ("<b>", "<p>", "<a>")]
    g = RDFGraph.from_triples(triples, fold_types=True)
    assert g.m == 2 and len(g.typesets) == 3
    for q, want in [("SELECT ?x WHERE { ?x a <A> }", {"<a>", "<b>"}), ("SELECT ?x WHERE { ?x a <B> }", {"<a>"}),
                    ("SELECT ?x WHERE { ?x a <A>, <B> }", {"<a>"}),
                    ("SELECT ?x WHERE { ?x a <B> . ?x <p> ?y . ?y a <A> }", {"<a>"}),
                    ("SELECT ?x WHERE { ?x a <C> }", set())]:
        assert {r[0] for r in evaluate(g, q).decoded()} == want, q
    with pytest.raises(ValueError):
        evaluate(g, "SELECT ?c WHERE { ?x a ?c }")


# ---------------------------------------------------------------- against rdflib: LUBM
@pytest.fixture(scope="module")
def lubm_data():
    triples = list(lubm.generate(2, departments=2, seed=3))
    return triples, nt_text(triples)


@pytest.mark.parametrize("fold", [False, True])
@pytest.mark.parametrize("name", sorted(lubm.QUERIES))
def test_lubm_queries_equal_rdflib(lubm_data, name, fold):
    triples, nt = lubm_data
    q = lubm.QUERIES[name]
    vs, rows = ours(triples, q, fold_types=fold)
    expect = rdflib_rows(nt, q, vs)
    assert len(expect) > 0
    assert Counter(rows) == Counter(expect)


# ---------------------------------------------------------------- against rdflib: random graphs and BGPs
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"
IRIS = [f"<http://e/{i}>" for i in range(5)]
LITS = ['"l0"', '"l1"@en', f'"7"^^<{XSD_INT}>']
PREDS = ["<http://p/0>", "<http://p/1>", "<http://p/2>"]
CLASSES = ["<http://c/A>", "<http://c/B>"]
VARS = ["a", "b", "c", "d"]


@st.composite
def rdf_case(draw):
    n_tr = draw(st.integers(1, 20))
    n_ent = draw(st.integers(2, len(IRIS)))
    triples = []
    for _ in range(n_tr):
        s = draw(st.sampled_from(IRIS[:n_ent]))
        if draw(st.integers(0, 4)) == 0:
            triples.append((s, RDF_TYPE, draw(st.sampled_from(CLASSES))))
        else:
            triples.append((s, draw(st.sampled_from(PREDS)), draw(st.sampled_from(IRIS[:n_ent] * 2 + LITS))))
    fold = draw(st.booleans())
    pats = []
    for _ in range(draw(st.integers(1, 4))):
        s = draw(st.sampled_from([f"?{v}" for v in VARS] * 3 + IRIS[:2]))
        if draw(st.integers(0, 4)) == 0:
            o = draw(st.sampled_from(CLASSES + ([] if fold else ["?c"])))
            pats.append((s, "a", o))
        else:
            o = draw(st.sampled_from([f"?{v}" for v in VARS] * 3 + IRIS[:2] + LITS[:2] + ["<http://e/absent>"]))
            pats.append((s, draw(st.sampled_from(PREDS)), o))
    used = sorted({t[1:] for p in pats for t in (p[0], p[2]) if t.startswith("?")})
    if not used:
        pats.append(("?a", PREDS[0], "?b"))
        used = ["a", "b"]
    proj = draw(st.one_of(st.none(), st.lists(st.sampled_from(used), min_size=1, max_size=3, unique=True)))
    distinct = draw(st.booleans())
    return triples, pats, proj, distinct, fold, draw(st.booleans())


@scaled(150)
@given(rdf_case())
def test_random_bgps_equal_rdflib(case):
    triples, pats, proj, distinct, fold, iso = case
    body = " . ".join(f"{s} {p} {o}" for s, p, o in pats)
    sel = "*" if proj is None else " ".join("?" + v for v in proj)
    query = f"SELECT {'DISTINCT ' if distinct else ''}{sel} WHERE {{ {body} }}"
    vs, rows = ours(triples, query, fold_types=fold, isomorphic=iso)
    all_vars = parse_sparql(query).variables
    nt = nt_text(triples)
    full = rdflib_rows(nt, f"SELECT * WHERE {{ {body} }}", all_vars)
    if iso:
        full = [r for r in full if len(set(r)) == len(r)]
    idx = [all_vars.index(v) for v in vs]
    expect = [tuple(r[i] for i in idx) for r in full]
    if distinct:
        expect = list(set(expect))
    assert Counter(rows) == Counter(expect), query


def test_hypothesis_covers_blank_node_variables():
    triples = [("<a>", "<p>", "<b>"), ("<b>", "<p>", "<c>")]
    vs, rows = ours(triples, "SELECT * WHERE { ?x <p> _:m . _:m <p> ?y }")
    assert vs == ["x", "y"] and rows == [("<a>", "<c>")]


# ---------------------------------------------------------------- CLI
def test_cli_sparql(tmp_path, capsys):
    from distsm.cli import main

    data = tmp_path / "d.nt"
    data.write_text(nt_text(lubm.generate(1, departments=1)))
    qf = tmp_path / "q.rq"
    qf.write_text(lubm.QUERIES["Q4"])
    assert main(["sparql", str(data), str(qf), "--json"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert out and set(out[0]) == {"X", "Y1", "Y2", "Y3"}
    assert main(["sparql", str(data), str(qf), "--limit", "2", "--fold-types"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "?X\t?Y1\t?Y2\t?Y3" and len(lines) == 3
    qf.write_text("SELECT ?x WHERE { ?x ?p ?y }")
    assert main(["sparql", str(data), str(qf)]) == 2
    assert "variable predicate" in capsys.readouterr().err


def test_rows_are_int_ids(lubm_data):
    g = RDFGraph.from_triples(lubm_data[0])
    r = evaluate(g, lubm.QUERIES["Q14"])
    assert r.rows.dtype == np.int64 and r.rows.shape[1] == 1


# ---------------------------------------------------------------- IRSMG type-isomorphic walks
def brute_walks(triples, walk):
    """Every data walk matching ``walk`` by direct enumeration over the triples."""
    types: dict[str, set[str]] = {}
    for s, p, o in triples:
        if p == RDF_TYPE:
            types.setdefault(s, set()).add(o)
    nodes = {t for s, _, o in triples for t in (s, o)}
    trip = set(triples)

    def ok_type(v, t):
        return t is None or t in types.get(v, set())

    walks = [(v,) for v in nodes if ok_type(v, walk[0])]
    for j in range(len(walk) // 2):
        p, t = walk[2 * j + 1], walk[2 * j + 2]
        back = p.startswith("^")
        pred = p[1:] if back else p
        walks = [w + (v,) for w in walks for v in nodes
                 if ((v, pred, w[-1]) if back else (w[-1], pred, v)) in trip and ok_type(v, t)]
    return Counter(walks)


@scaled(120)
@given(st.data())
def test_type_walks_equal_brute_force(data):
    from distsm.rdf import type_walks

    triples = []
    for _ in range(data.draw(st.integers(1, 16))):
        s = data.draw(st.sampled_from(IRIS))
        if data.draw(st.integers(0, 3)) == 0:
            triples.append((s, RDF_TYPE, data.draw(st.sampled_from(CLASSES))))
        else:
            triples.append((s, data.draw(st.sampled_from(PREDS[:2])), data.draw(st.sampled_from(IRIS))))
    k = data.draw(st.integers(1, 4))
    walk = [data.draw(st.sampled_from([None, *CLASSES]))]
    for _ in range(k):
        walk.append(data.draw(st.sampled_from(PREDS[:2] + ["^" + PREDS[0]])))
        walk.append(data.draw(st.sampled_from([None, None, *CLASSES])))
    fold = data.draw(st.booleans())
    g = RDFGraph.from_triples(triples, fold_types=fold)
    got = Counter(tuple(g.entities.decode(i) for i in row) for row in type_walks(g, walk).tolist())
    assert got == brute_walks(triples, walk)


def test_type_walks_on_lubm(lubm_data):
    from distsm.rdf import type_walks

    triples, _ = lubm_data
    g = RDFGraph.from_triples(triples)
    walk = "ub:GraduateStudent ub:advisor ub:Professor ub:teacherOf ub:Course ^ub:takesCourse ub:Student"
    rows = type_walks(g, walk, prefixes={"ub": lubm.UB})
    expect = brute_walks(triples, [f"<{lubm.UB}GraduateStudent>", f"<{lubm.UB}advisor>", f"<{lubm.UB}Professor>",
                                   f"<{lubm.UB}teacherOf>", f"<{lubm.UB}Course>", f"^<{lubm.UB}takesCourse>",
                                   f"<{lubm.UB}Student>"])
    assert rows.shape[0] == sum(expect.values()) > 0
    with pytest.raises(ValueError):
        type_walks(g, "ub:Student ub:advisor", prefixes={"ub": lubm.UB})


def test_bad_utf8_names_its_line(tmp_path):
    f = tmp_path / "bad.nt"
    f.write_bytes(b"<a> <p> <b> .\n" * 5000 + b'<a> <p> "\xff" .\n')
    with pytest.raises(GraphFormatError) as e:
        read_ntriples(f)
    assert e.value.line == 5001


def test_limit_and_offset(lubm_data):
    g = RDFGraph.from_triples(lubm_data[0])
    full = evaluate(g, lubm.QUERIES["Q14"]).decoded()
    assert len(full) > 10
    assert evaluate(g, lubm.QUERIES["Q14"], limit=4).decoded() == full[:4]
    assert evaluate(g, lubm.QUERIES["Q14"] + " LIMIT 5 OFFSET 3").decoded() == full[3:8]
    assert evaluate(g, lubm.QUERIES["Q14"] + " LIMIT 5 OFFSET 3", limit=2).decoded() == full[3:5]
