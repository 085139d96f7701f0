"""The must-pass list (conformance/passing.txt): every file and target of IREE's e2e suite that
weir passes, one `folder/file.mlir backend` per line. `make test` runs each of them, so a file
that passes once can never regress unnoticed; the list only records what must pass, never what
may fail.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conformance.execute import Result
from conformance.plan import TARGET_BY_NAME, Job, plan_job, read_folder_build

PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULT_LIST = PACKAGE_DIR / "passing.txt"
# The suite sits next to the repository (<repo>/../shared/iree-e2e); a clone made elsewhere on
# the same machine (a CI checkout) finds it where the workplace keeps it.
_SUITE_PLACES = (PACKAGE_DIR.parent.parent / "shared" / "iree-e2e",
                 Path("/work/shared/iree-e2e"))
DEFAULT_SUITE = next((p for p in _SUITE_PLACES if p.is_dir()), _SUITE_PLACES[0])

Entry = tuple[str, str]  # (`folder/file.mlir`, backend)


class ListError(Exception):
    """A line of the list that does not name a file and a known target."""


def read_list(path: Path) -> list[Entry]:
    """The entries of `path`; `#` starts a comment, blank lines are ignored."""
    entries: list[Entry] = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2 or fields[1] not in TARGET_BY_NAME:
            raise ListError(f"{path}:{number}: expected 'folder/file.mlir TARGET' with TARGET "
                            f"one of {', '.join(TARGET_BY_NAME)}, got '{line}'")
        entries.append((fields[0], fields[1]))
    return entries


def write_list(path: Path, entries: list[Entry]) -> None:
    """Rewrites the list sorted, keeping its header comment."""
    header = [ln for ln in path.read_text().splitlines() if ln.startswith("#")] \
        if path.exists() else []
    body = [f"{name} {backend}" for name, backend in sorted(set(entries))]
    path.write_text("\n".join(header + body) + "\n")


def jobs_for(entries: list[Entry], suite_dir: Path) -> list[Job]:
    """The runner's jobs for `entries`, with the same flags as a full run. A listed file that
    is not in the suite is a ListError: the list must never name what cannot run."""
    jobs = []
    for name, backend in entries:
        path = suite_dir / name
        if not path.is_file():
            raise ListError(f"'{name}' is listed as passing but {path} does not exist")
        build, problem = read_folder_build(path.parent)
        jobs.append(plan_job(path, suite_dir, TARGET_BY_NAME[backend], build, problem))
    return jobs


def check_required(results: list[Result], required: list[Entry], suite_dir: Path,
                   folders: tuple[str, ...] | None, backends: set[str],
                   log: Callable[[str], None]) -> int:
    """1 when a listed file of this run's folders and targets failed or is gone from the suite,
    each logged as a REGRESSION; listed files outside the run are not judged (a run of one
    folder checks its part of the list)."""
    ran = {(r.job.name, r.job.target.backend): r for r in results}
    judged = [(name, backend) for name, backend in sorted(set(required)) if backend in backends
              and (folders is None or name.rsplit("/", 1)[0] in folders)]
    missing = [e for e in judged if not (suite_dir / e[0]).is_file()]
    failed = [ran[e] for e in judged if e in ran and not ran[e].outcome.passed]
    for name, backend in missing:
        log(f"REGRESSION {name} {backend}: listed as passing but not in {suite_dir}")
    for r in failed:
        log(f"REGRESSION {r.job.name} {r.job.target.backend}: {r.outcome.status}: "
            f"{r.outcome.reason}")
    bad = len(missing) + len(failed)
    log(f"must-pass list: {len(judged) - bad} of {len(judged)} passed")
    return 1 if bad else 0
