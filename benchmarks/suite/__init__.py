"""The suite behind `python -m benchmarks`: workloads, the peers that run them, the machine's
limits and the report."""
