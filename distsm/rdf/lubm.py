"""A LUBM-shaped RDF generator and the BGP-only LUBM queries in flattened form.

The generator follows the shape of LUBM's UBA (universities, departments, research groups, faculty of four ranks,
department chairs, graduate and undergraduate students, courses, publications, with LUBM's predicates) at a
configurable size.  LUBM's class hierarchy is *flattened*: every entity carries all its superclasses as explicit
``rdf:type`` triples (a GraduateStudent is also a Student and a Person; a FullProfessor a Professor, Faculty,
Employee and Person; a chair also a Chair), so the queries need no reasoning.  Properties are not flattened
(``worksFor`` triples are not copied to ``memberOf``), and both the generator and the queries are plain data:
any SPARQL engine without inference gives the same answers.
"""

from __future__ import annotations

import random
from collections.abc import Generator, Iterator
from dataclasses import dataclass

from distsm.rdf.ntriples import RDF_TYPE, iri, literal

UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
PREFIXES = ("PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n"
            f"PREFIX ub: <{UB}>\n")

_SUPER = {
    "FullProfessor": ("FullProfessor", "Professor", "Faculty", "Employee", "Person"),
    "AssociateProfessor": ("AssociateProfessor", "Professor", "Faculty", "Employee", "Person"),
    "AssistantProfessor": ("AssistantProfessor", "Professor", "Faculty", "Employee", "Person"),
    "Lecturer": ("Lecturer", "Faculty", "Employee", "Person"),
    "GraduateStudent": ("GraduateStudent", "Student", "Person"),
    "UndergraduateStudent": ("UndergraduateStudent", "Student", "Person"),
    "Course": ("Course", "Work"),
    "GraduateCourse": ("GraduateCourse", "Course", "Work"),
    "Publication": ("Publication", "Work"),
    "University": ("University", "Organization"),
    "Department": ("Department", "Organization"),
    "ResearchGroup": ("ResearchGroup", "Organization"),
}


def _ub(name: str) -> str:
    return iri(UB + name)


def university_iri(u: int) -> str:
    return iri(f"http://www.University{u}.edu")


def department_iri(u: int, d: int) -> str:
    return iri(f"http://www.Department{d}.University{u}.edu")


def _entity(u: int, d: int, local: str) -> str:
    return iri(f"http://www.Department{d}.University{u}.edu/{local}")


Triple = tuple[str, str, str]


@dataclass
class _Draw:
    """The generator's random draws, in the order LUBM's shape makes them (one ``rng`` for the whole dataset)."""

    rng: random.Random
    scale: float
    universities: int
    degree_universities: int  # degrees may come from universities outside the generated set

    def k(self, lo: int, hi: int) -> int:
        """A head count: ``lo..hi`` times the scale, at least one."""
        return max(1, round(self.rng.randint(lo, hi) * self.scale))

    def some_univ(self) -> str:
        return university_iri(self.rng.randrange(self.degree_universities))


def _typed(s: str, cls: str) -> Iterator[Triple]:
    for c in _SUPER[cls]:
        yield s, RDF_TYPE, _ub(c)


def generate(universities: int = 1, *, departments: int = 3, scale: float = 1.0, seed: int = 0
             ) -> Iterator[Triple]:
    """Yield canonical ``(s, p, o)`` triples of a LUBM-shaped dataset.

    ``departments`` per university; ``scale`` multiplies the per-department head counts (LUBM's are about
    scale 3-4).  Deterministic for a given seed.
    """
    draw = _Draw(random.Random(seed), scale, universities, max(universities, 5))
    for u in range(draw.degree_universities):
        yield from _typed(university_iri(u), "University")
    for u in range(universities):
        for d in range(departments):
            yield from _department(draw, u, d)


def _department(draw: _Draw, u: int, d: int) -> Iterator[Triple]:
    """One department: its courses, research groups, faculty (with their publications) and students."""
    dept = department_iri(u, d)
    yield from _typed(dept, "Department")
    yield dept, _ub("subOrganizationOf"), university_iri(u)
    yield dept, _ub("name"), literal(f"Department{d}")
    courses = [_entity(u, d, f"Course{i}") for i in range(draw.k(5, 8))]
    gcourses = [_entity(u, d, f"GraduateCourse{i}") for i in range(draw.k(3, 5))]
    for kind, group in (("Course", courses), ("GraduateCourse", gcourses)):
        for c in group:
            yield from _typed(c, kind)
            yield c, _ub("name"), literal(c[c.rfind("/") + 1:-1])
    for g in range(draw.k(1, 3)):
        grp = _entity(u, d, f"ResearchGroup{g}")
        yield from _typed(grp, "ResearchGroup")
        yield grp, _ub("subOrganizationOf"), dept
    faculty = yield from _faculty(draw, u, d, courses + gcourses)
    chair = _entity(u, d, "FullProfessor0")
    yield chair, RDF_TYPE, _ub("Chair")
    yield chair, _ub("headOf"), dept
    profs = [f for f in faculty if "Professor" in f]
    yield from _students(draw, u, d, profs, courses, gcourses)


def _faculty(draw: _Draw, u: int, d: int, teaching: list[str]) -> Generator[Triple, None, list[str]]:
    """The department's faculty by rank, the courses they teach (from ``teaching``) and their publications;
    returns the faculty."""
    dept, rng = department_iri(u, d), draw.rng
    faculty: list[str] = []
    pubs = 0
    ranks = [("FullProfessor", draw.k(2, 3)), ("AssociateProfessor", draw.k(2, 4)),
             ("AssistantProfessor", draw.k(2, 3)), ("Lecturer", draw.k(1, 2))]
    teach_pool = list(teaching)
    rng.shuffle(teach_pool)
    for rank, count in ranks:
        for i in range(count):
            f = _entity(u, d, f"{rank}{i}")
            faculty.append(f)
            yield from _typed(f, rank)
            yield f, _ub("worksFor"), dept
            yield f, _ub("name"), literal(f"{rank}{i}")
            yield f, _ub("emailAddress"), literal(f"{rank}{i}@Department{d}.University{u}.edu")
            yield f, _ub("telephone"), literal(f"xxx-xxx-{rng.randrange(10000):04d}")
            yield f, _ub("undergraduateDegreeFrom"), draw.some_univ()
            if rank != "Lecturer":
                yield f, _ub("mastersDegreeFrom"), draw.some_univ()
                yield f, _ub("doctoralDegreeFrom"), draw.some_univ()
            for _ in range(rng.randint(1, 2)):
                if teach_pool:
                    yield f, _ub("teacherOf"), teach_pool.pop()
            for _ in range(rng.randint(1, 3)):
                p = _entity(u, d, f"Publication{pubs}")
                pubs += 1
                yield from _typed(p, "Publication")
                yield p, _ub("name"), literal(f"Publication{pubs}")
                yield p, _ub("publicationAuthor"), f
    return faculty


def _students(draw: _Draw, u: int, d: int, profs: list[str], courses: list[str],
              gcourses: list[str]) -> Iterator[Triple]:
    """The department's graduate students (advised by ``profs``, taking graduate courses) and undergraduates."""
    dept, rng = department_iri(u, d), draw.rng
    for i in range(draw.k(4, 7)):
        s = _entity(u, d, f"GraduateStudent{i}")
        yield from _typed(s, "GraduateStudent")
        yield s, _ub("memberOf"), dept
        yield s, _ub("name"), literal(f"GraduateStudent{i}")
        yield s, _ub("emailAddress"), literal(f"GraduateStudent{i}@Department{d}.University{u}.edu")
        yield s, _ub("undergraduateDegreeFrom"), university_iri(rng.randrange(max(draw.universities, 2)))
        yield s, _ub("advisor"), rng.choice(profs)
        taken = rng.sample(gcourses, min(len(gcourses), rng.randint(1, 3)))
        for c in taken if i else sorted(set(taken) | {gcourses[0]}):
            yield s, _ub("takesCourse"), c
        if rng.random() < 0.3:
            yield s, _ub("teachingAssistantOf"), rng.choice(courses)
    for i in range(draw.k(12, 20)):
        s = _entity(u, d, f"UndergraduateStudent{i}")
        yield from _typed(s, "UndergraduateStudent")
        yield s, _ub("memberOf"), dept
        yield s, _ub("name"), literal(f"UndergraduateStudent{i}")
        if rng.random() < 0.2:
            yield s, _ub("advisor"), rng.choice(profs)
        for c in rng.sample(courses, min(len(courses), rng.randint(2, 4))):
            yield s, _ub("takesCourse"), c


def write_ntriples(path: str, triples: Iterator[tuple[str, str, str]]) -> int:
    """Write canonical triples as N-Triples; returns the number of lines."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for s, p, o in triples:
            fh.write(f"{s} {p} {o} .\n")
            n += 1
    return n


#: The BGP-only LUBM queries in flattened form (class hierarchy as explicit types, no property inference).
QUERIES: dict[str, str] = {
    "Q1": PREFIXES + """SELECT ?X WHERE {
  ?X rdf:type ub:GraduateStudent .
  ?X ub:takesCourse <http://www.Department0.University0.edu/GraduateCourse0> }""",
    "Q2": PREFIXES + """SELECT ?X ?Y ?Z WHERE {
  ?X rdf:type ub:GraduateStudent . ?Y rdf:type ub:University . ?Z rdf:type ub:Department .
  ?X ub:memberOf ?Z . ?Z ub:subOrganizationOf ?Y . ?X ub:undergraduateDegreeFrom ?Y }""",
    "Q3": PREFIXES + """SELECT ?X WHERE {
  ?X rdf:type ub:Publication .
  ?X ub:publicationAuthor <http://www.Department0.University0.edu/AssistantProfessor0> }""",
    "Q4": PREFIXES + """SELECT ?X ?Y1 ?Y2 ?Y3 WHERE {
  ?X rdf:type ub:Professor . ?X ub:worksFor <http://www.Department0.University0.edu> .
  ?X ub:name ?Y1 . ?X ub:emailAddress ?Y2 . ?X ub:telephone ?Y3 }""",
    "Q7": PREFIXES + """SELECT ?X ?Y WHERE {
  ?X rdf:type ub:Student . ?Y rdf:type ub:Course . ?X ub:takesCourse ?Y .
  <http://www.Department0.University0.edu/AssociateProfessor0> ub:teacherOf ?Y }""",
    "Q8": PREFIXES + """SELECT ?X ?Y ?Z WHERE {
  ?X rdf:type ub:Student . ?Y rdf:type ub:Department . ?X ub:memberOf ?Y .
  ?Y ub:subOrganizationOf <http://www.University0.edu> . ?X ub:emailAddress ?Z }""",
    "Q9": PREFIXES + """SELECT ?X ?Y ?Z WHERE {
  ?X rdf:type ub:Student . ?Y rdf:type ub:Faculty . ?Z rdf:type ub:Course .
  ?X ub:advisor ?Y . ?Y ub:teacherOf ?Z . ?X ub:takesCourse ?Z }""",
    "Q14": PREFIXES + """SELECT ?X WHERE { ?X rdf:type ub:UndergraduateStudent }""",
}
