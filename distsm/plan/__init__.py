"""Query planning: automorphisms, symmetry breaking and the inter-partition plan."""

from distsm.plan.inter import EdgeGroup, InterPartitionPlan, SearchSequence, inter_partition_plan

__all__ = ["EdgeGroup", "InterPartitionPlan", "SearchSequence", "inter_partition_plan"]
