"""Benchmarks: each script writes JSON (machine, versions, command, seed) under benchmarks/results/."""
