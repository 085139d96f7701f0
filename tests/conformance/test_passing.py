"""Every file and target of conformance/passing.txt still passes: IREE's e2e check programs that
weir passes once join `make test` and can never regress. Each is compiled and checked exactly as
`make conformance` does (same flags, same tools, one process per step), in parallel."""

from __future__ import annotations

from pathlib import Path

from conformance.execute import Limits, default_jobs, run_all
from conformance.must_pass import DEFAULT_LIST, jobs_for, read_list


def test_the_list_is_well_formed_sorted_and_not_empty() -> None:
    entries = read_list(DEFAULT_LIST)
    assert entries, f"{DEFAULT_LIST} lists no file"
    assert entries == sorted(set(entries)), f"{DEFAULT_LIST}: keep it sorted, without repeats"


def test_every_listed_file_passes(suite_dir: Path, tmp_path: Path) -> None:
    jobs = jobs_for(read_list(DEFAULT_LIST), suite_dir)
    results = run_all(jobs, Limits(timeout_s=300), tmp_path, default_jobs())
    failed = [f"{r.job.name} {r.job.target.label}: {r.outcome.status}: {r.outcome.reason}"
              for r in results if not r.outcome.passed]
    assert not failed, "listed as passing in conformance/passing.txt, now failing:\n" + \
        "\n".join(failed)
