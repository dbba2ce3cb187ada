"""The matching semantics a result was computed under (DESIGN §1).

It sits below the API, the planner and the executors, which all name it in their results, so the layers point one
way: ``kernels`` <- ``semantics`` <- ``plan`` <- ``partitioned``/``cluster`` <- ``api``.
"""

from __future__ import annotations

from dataclasses import dataclass

from distsm.arguments import check_declared
from distsm.kernels.query_plan import MatchOptions


@dataclass(frozen=True)
class Semantics:
    """The matching semantics a result was computed under; every result names it."""

    induced: bool = False
    homomorphism: bool = False
    unique: bool = False

    def __post_init__(self) -> None:
        check_declared(self)
        if self.unique and self.homomorphism:
            raise ValueError("unique=True is not defined for homomorphisms (an automorphism may fix a "
                             "non-injective map); use unique with injective matching only")

    @property
    def match_options(self) -> MatchOptions:
        return MatchOptions(induced=self.induced, homomorphism=self.homomorphism)

    def describe(self) -> str:
        text = self.match_options.describe()
        return text + (", unique subgraphs" if self.unique else ", automorphic maps counted separately")

    def as_dict(self) -> dict[str, bool]:
        return {"induced": self.induced, "homomorphism": self.homomorphism, "unique": self.unique}

    @staticmethod
    def of(induced: bool, homomorphism: bool, unique: bool) -> Semantics:
        """The semantics of these flags: for plain bools, one shared instance per combination (the entry points
        ask once a call, after checking their arguments; building and checking one anew took about a microsecond),
        else a new one, checked as the constructor checks it."""
        if type(induced) is bool and type(homomorphism) is bool and type(unique) is bool:
            shared = _SHARED.get((induced, homomorphism, unique))
            if shared is not None:
                return shared
        return Semantics(induced, homomorphism, unique)


#: The default semantics: every embedding, non-induced, automorphic maps counted separately.
EVERY_MATCH = Semantics()
#: Every valid combination of the three flags (see :meth:`Semantics.of`).
_SHARED = {(i, h, u): Semantics(i, h, u) for i in (False, True) for h in (False, True) for u in (False, True)
           if not (u and h)}
