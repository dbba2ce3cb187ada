"""Query planning: automorphisms, symmetry breaking and (later) the inter-partition plan."""
