"""Dask orchestration: starting or joining clusters, pinning partitions, query batches.  Installed as
``distsm.cluster``."""
