"""What weir's command-line tools share: IREE's text forms of values (`--input`,
`--expected_output`, printed results), npy files, expected-output comparison and flag parsing.
Kept apart from the tools so the Python API's users and tests can read and print values the
same way."""
