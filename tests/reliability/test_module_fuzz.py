"""Mutated module files (module_fuzz.py) never crash, hang or surprise weir.

`make test`: a fixed seed and a few hundred cases per mode. `make stress` (`--stress`): 20,000
per mode. `pytest -rP tests/reliability/test_module_fuzz.py` shows the figures and lists every
mutant that ran to other results, with where its mutation landed.

- raw (a corrupted file): every mutant is rejected before anything in it is trusted.
- resealed (a producer that wrote a wrong value and a valid checksum): no crash, no hang, no
  Python exception other than a WeirError, every error one line; a mutant that runs to other
  results changed either data the file carries (constant bytes, a constant value) or the
  program into another program the verifier cannot tell from a real one, which then must run
  the same on every driver and every time (module_fuzz.FuzzReport.program_changes), unless the
  change dropped one of the program's waits for its own work: such a program races with it
  (FuzzReport.racy_programs). docs/threat_model.md says why no verifier can do better."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_corpus import CorpusEntry, build_corpus
from fuzz_mutations import MODES
from module_fuzz import FuzzReport, describe, run_fuzz

SEED = 20240607
FAST_CASES = {"raw": 300, "resealed": 400}
STRESS_CASES = 20_000


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[CorpusEntry]:
    """Every program compiled once for this session (targets x execution models)."""
    return build_corpus(tmp_path_factory.mktemp("fuzz-corpus"))


def _listing(report: FuzzReport, records: list[dict[str, object]]) -> str:
    return "\n".join([report.summary().split("\n")[0], *(describe(r) for r in records)])


@pytest.mark.parametrize("mode", MODES)
def test_mutated_module_files(corpus: list[CorpusEntry], stress: bool, mode: str) -> None:
    count = STRESS_CASES if stress else FAST_CASES[mode]
    # A short call deadline keeps the few mutants that loop (a loop bound made huge) cheap.
    report = run_fuzz(corpus, SEED, mode, count, call_deadline_s=10.0 if stress else 2.0)
    print(report.summary())
    assert report.cases == count
    assert not report.failures(), _listing(report, report.failures())
    assert not report.wrong_results(), _listing(report, report.wrong_results())
    if mode == "raw":
        assert report.outcomes["past-checksum"] == 0, _listing(report, report.records)
        assert report.outcomes["rejected"] == count
    else:
        # Most mutants are rejected, and rejections come from every stage.
        assert report.outcomes["rejected"] > 0.8 * count
        stages = {key.split(":")[0] for key in report.rejections}
        assert {"decode", "run"} <= stages


_FAKE_WORKER = '''
import json, os, signal, sys, threading
fd = int(sys.argv[1])
batch = json.loads(sys.stdin.readline())
with os.fdopen(fd, "w", buffering=1) as out:
    for index in batch["cases"]:
        if index == 1:
            os.kill(os.getpid(), signal.SIGSEGV)
        if index == 3:
            threading.Event().wait()  # never answers
        out.write(json.dumps({"case": index, "entry": "e", "driver": "d", "file": "f",
                              "kind": "k", "where": "w", "detail": "d",
                              "outcome": "identical"}) + "\\n")
'''


def test_the_driver_counts_crashes_and_hangs_and_goes_on(corpus: list[CorpusEntry],
                                                        tmp_path: Path) -> None:
    """A worker that dies (SIGSEGV) or stops answering is replaced and its case counted."""
    worker = tmp_path / "fake_worker.py"
    worker.write_text(_FAKE_WORKER)
    report = run_fuzz(corpus, SEED, "resealed", 5, workers=1, case_timeout_s=3.0, worker=worker)
    assert report.cases == 5
    assert report.outcomes == {"identical": 3, "crash": 1, "hang": 1}
    by_case = {r["case"]: r for r in report.records}
    assert by_case[1]["outcome"] == "crash" and "-11" in str(by_case[1]["message"])
    assert by_case[3]["outcome"] == "hang"
    assert {1, 3} == set(by_case)
