"""The conformance runner: IREE's own end-to-end `check` programs (../shared/iree-e2e) compiled
and run by weir's tools, as a developer's measure of how much of IREE's test surface weir
covers. It lives beside the package, like benchmarks/, because it is a tool for working on weir
and not part of what weir ships; tests/conformance holds its tests and the must-pass check that
`make test` runs."""
