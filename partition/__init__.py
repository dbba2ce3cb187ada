"""Partitioning of the data graph (pymetis) and the on-disk partition store.  Installed as ``distsm.partition``."""
