"""Query planning (automorphisms, symmetry breaking, the inter-partition plan) and its execution (:mod:`.execute`)."""

from distsm.plan.inter import EdgeGroup, InterPartitionPlan, SearchSequence, Strategy, inter_partition_plan

__all__ = ["EdgeGroup", "InterPartitionPlan", "SearchSequence", "Strategy", "inter_partition_plan"]
