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


#: The default semantics: every embedding, non-induced, automorphic maps counted separately.
EVERY_MATCH = Semantics()
