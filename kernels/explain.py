"""What a count did and why: the record behind ``distsm.explain`` and ``distsm count --explain``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Explanation:
    """Filled in by the stages of :mod:`distsm.kernels.counting` when one is passed.

    ``path`` is ``"general"`` (every level joined, the last counted by probing), ``"trailing"`` (a core joined,
    then the trailing vertices counted from set sizes) or ``"filter"`` (a query vertex kept no candidate: no
    match); ``reason`` says why. ``trials`` lists the trial general joins that were stopped, as ``(backend,
    allowance, entries read)``; ``join_runner`` and ``join_entries`` name the backend of the general join that
    counted (on the general path) and the adjacency entries it read. ``order`` is the join order (core first),
    ``estimated`` and ``actual`` the partial matches per level (None where that level was counted, not joined).
    ``placement`` lists the host-or-device choices of a device backend with their reasons
    (:mod:`distsm.kernels.placement`). ``seconds`` splits the time by stage.
    """

    path: str = "general"
    reason: str = ""
    trials: list[tuple[str, int, int]] = field(default_factory=list)
    join_runner: str = ""
    join_entries: int = 0
    order: tuple[int, ...] = ()
    trailing: tuple[int, ...] = ()
    estimated: list[float] = field(default_factory=list)
    actual: list[int | None] = field(default_factory=list)
    candidates: list[int] = field(default_factory=list)
    refined_candidates: list[int] = field(default_factory=list)
    candidate_edges: int = 0
    refine_passes: int = 0
    trailing_entries: int = 0
    trailing_words: int = 0
    plans_tried: int = 0
    placement: list[str] = field(default_factory=list)
    count: int | None = None
    seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def __str__(self) -> str:
        lines = [f"path: {self.path} ({self.reason})" if self.reason else f"path: {self.path}"]
        for backend, allowance, read in self.trials:
            lines.append(f"trial general join on {backend}: stopped after {read} entries (allowance {allowance})")
        if self.join_runner:
            lines.append(f"general join on {self.join_runner}: {self.join_entries} adjacency entries read")
        if self.count is not None:
            lines.append(f"count: {self.count}")
        if self.refined_candidates:
            lines.append(f"candidates: {sum(self.candidates)} filtered, {sum(self.refined_candidates)} after "
                         f"{self.refine_passes} refinement passes; {self.candidate_edges} candidate edges")
        lines.append("level  vertex  estimated      actual")
        for i, u in enumerate(self.order):
            est = self.estimated[i] if i < len(self.estimated) else None
            act = self.actual[i] if i < len(self.actual) else None
            kind = " (trailing, counted)" if u in self.trailing else ""
            est_s = f"{est:.3g}" if est is not None else "-"
            act_s = str(act) if act is not None else "-"
            lines.append(f"{i:>5}  {u:>6}  {est_s:>9}  {act_s:>10}{kind}")
        lines.extend(f"placement: {note}" for note in self.placement)
        if self.trailing:
            lines.append(f"trailing vertices {list(self.trailing)}: {self.trailing_entries} set entries read, "
                         f"{self.trailing_words} bit-row words read")
        if self.seconds:
            lines.append("seconds: " + ", ".join(f"{k} {v:.4f}" for k, v in self.seconds.items()))
        return "\n".join(lines)
