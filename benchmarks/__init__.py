"""weir's benchmark suite (`python -m benchmarks`). A regular package on purpose: xDSL installs
an unrelated top-level `benchmarks` package into site-packages, which would otherwise shadow
this directory."""
