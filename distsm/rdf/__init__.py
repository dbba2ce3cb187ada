"""RDF graphs (N-Triples) and SPARQL basic-graph-pattern queries on the distsm engine.

``read_ntriples(path)`` -> :class:`RDFGraph`; ``evaluate(graph, "SELECT ...")`` (or ``sparql(path, text)``) ->
:class:`Result` with rows of entity ids and ``decoded()`` canonical N-Triples terms.  See :mod:`distsm.rdf.bgp`
for the encoding and the exact semantics; ``type_walks`` is IRSMG's type-isomorphic walk matching.
"""

from distsm.rdf.bgp import RDFGraph, Result, evaluate, parse_walk, read_ntriples, sparql, type_walks
from distsm.rdf.ntriples import RDF_TYPE, Dictionary, iter_triples, parse_line
from distsm.rdf.sparql import Query, SparqlSyntaxError, Var, parse_sparql

__all__ = ["RDFGraph", "Result", "evaluate", "read_ntriples", "sparql", "type_walks", "parse_walk", "RDF_TYPE",
           "Dictionary", "iter_triples", "parse_line", "Query", "SparqlSyntaxError", "Var", "parse_sparql"]
