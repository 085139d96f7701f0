"""The conformance report: per folder and target how many files pass, one line per failure with
its reason, the reasons that block most files (what to build next), and the flags of IREE's
build that weir did not take. Printed as text, written as results.md and results.json.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from conformance.execute import Result
from conformance.plan import TARGETS, Target

# The folders whose programs are linalg-on-tensors (not StableHLO or TOSA input): their
# subtotal is the row to watch while weir has no StableHLO/TOSA front end.
LINALG_LEVEL = ("linalg", "linalg_ext_ops", "math", "regression", "subbyte_types", "tensor_ops")


@dataclass(frozen=True)
class Cell:
    """Files of one folder on one target: all of them, and those IREE's build runs there."""

    passed: int = 0
    total: int = 0
    iree_passed: int = 0
    iree_total: int = 0

    def __add__(self, other: Cell) -> Cell:
        return Cell(self.passed + other.passed, self.total + other.total,
                    self.iree_passed + other.iree_passed, self.iree_total + other.iree_total)


def _cell(results: Sequence[Result]) -> Cell:
    return Cell(passed=sum(r.outcome.passed for r in results), total=len(results),
                iree_passed=sum(r.outcome.passed for r in results if r.job.iree_runs),
                iree_total=sum(r.job.iree_runs for r in results))


def _targets(results: Sequence[Result]) -> list[Target]:
    present = {r.job.target for r in results}
    return [t for t in TARGETS if t in present]


def _folders(results: Sequence[Result]) -> list[str]:
    return list(dict.fromkeys(r.job.folder for r in results))


def table(results: Sequence[Result]) -> list[tuple[str, int, dict[Target, Cell]]]:
    """(folder, files, cell per target) rows, then the linalg-level subtotal and the total."""
    targets = _targets(results)
    rows = []
    for folder in _folders(results):
        mine = [r for r in results if r.job.folder == folder]
        files = len({r.job.name for r in mine})
        rows.append((folder, files, {t: _cell([r for r in mine if r.job.target == t])
                                     for t in targets}))

    def total(label: str, keep: list[tuple[str, int, dict[Target, Cell]]]) -> None:
        cells = {t: sum((row[2][t] for row in keep), Cell()) for t in targets}
        rows.append((label, sum(row[1] for row in keep), cells))

    linalg = [row for row in rows if row[0] in LINALG_LEVEL]
    if linalg and len(linalg) < len(rows):
        total("linalg-level folders", linalg)
    total("all", [row for row in rows if row[0] != "linalg-level folders"])
    return rows


def markdown_table(results: Sequence[Result]) -> str:
    targets = _targets(results)
    head = ["folder", "files"]
    for t in targets:
        head += [f"{t.label} passed", f"of IREE's {t.backend} files"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for folder, files, cells in table(results):
        bold = folder in ("all", "linalg-level folders")
        row = [f"**{folder}**" if bold else f"`{folder}`", str(files)]
        for t in targets:
            c = cells[t]
            row += [f"{c.passed}/{c.total}",
                    f"{c.iree_passed}/{c.iree_total}" if c.iree_total else "—"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def failure_line(result: Result) -> str:
    dropped = f" [dropped: {' '.join(result.job.dropped_flags)}]" \
        if result.job.dropped_flags else ""
    return f"{result.job.name}: {result.outcome.status}: {result.outcome.reason}{dropped}"


def text_report(results: Sequence[Result]) -> str:
    """Per folder and target `N passed, M failed`, each failure under it with its reason."""
    out: list[str] = []
    for folder in _folders(results):
        for target in _targets(results):
            mine = [r for r in results if r.job.folder == folder and r.job.target == target]
            if not mine:
                continue
            c = _cell(mine)
            out.append(f"{folder} {target.label}: {c.passed} passed, {c.total - c.passed} "
                       f"failed (of IREE's {c.iree_total}: {c.iree_passed} passed)")
            out += [f"  {failure_line(r)}" for r in mine if not r.outcome.passed]
    return "\n".join(out) + "\n"


_LOCATION = re.compile(r"^\S+?:\d+:\d+: (error: )?")
_TOOL = re.compile(r"^weir-[\w-]+: error: ")
_CHECK_TEST = re.compile(r"^\S+ \(\d+ of \d+ tests failed\): ")
# Numbers, also inside shapes (`2048x512xf32`), but not element types (`f32`, `i8`).
_NUMBERS = re.compile(r"(?<![a-wyzA-Z_.\d])-?\d+(\.\d+)?(e[-+]?\d+)?")
_QUOTED_VALUE = re.compile(r"%[\w#]+")
_PARSER_GOT = re.compile(r"got '[^']*'")


def reason_key(result: Result) -> str:
    """A failure's reason without what differs between files (location, test name, numbers),
    so that files failing for the same missing feature count together."""
    reason = result.outcome.reason
    reason = _CHECK_TEST.sub("", _TOOL.sub("", _LOCATION.sub("", reason)))
    reason = _PARSER_GOT.sub("got '…'", _QUOTED_VALUE.sub("%v", reason))
    if result.outcome.status in ("check-failure", "run-error"):
        reason = _NUMBERS.sub("N", reason)
        reason = reason.split(": first mismatches", 1)[0]
    return f"{result.outcome.status}: {reason[:160]}"


def top_reasons(results: Sequence[Result], n: int = 10) -> list[tuple[str, int, int]]:
    """The `n` reasons that fail most runs: (reason, runs, distinct files)."""
    runs = Counter(reason_key(r) for r in results if not r.outcome.passed)
    files: dict[str, set[str]] = {}
    for r in results:
        if not r.outcome.passed:
            files.setdefault(reason_key(r), set()).add(r.job.name)
    return [(reason, count, len(files[reason])) for reason, count in runs.most_common(n)]


def _reasons_table(results: Sequence[Result]) -> list[str]:
    lines = ["| runs | files | reason |\n", "|---:|---:|---|\n"]
    return lines + [f"| {runs} | {files} | {reason.replace('|', chr(92) + '|')} |\n"
                    for reason, runs, files in top_reasons(results)]


def dropped_flags(results: Sequence[Result]) -> list[tuple[str, int]]:
    return Counter(f for r in results for f in r.job.dropped_flags).most_common()


def markdown_report(results: Sequence[Result], command: str) -> str:
    """results.md: the table, the common reasons, dropped flags, unlocated errors, failures."""
    parts = [f"# Conformance: IREE's e2e check programs\n\n`{command}`\n\n", markdown_table(results)]
    parts.append("\n## Most common failure reasons\n\nA run is one file on one target; a "
                 "compile stops at its first error, which can hide others.\n\n")
    parts += _reasons_table(results)
    linalg = [r for r in results if r.job.folder in LINALG_LEVEL]
    if linalg and len(linalg) < len(results):
        parts.append("\n### In the linalg-level folders\n\n")
        parts += _reasons_table(linalg)
    dropped = dropped_flags(results)
    if dropped:
        parts.append("\n## IREE flags weir does not take (dropped)\n\n")
        parts += [f"- `{flag}` ({count} runs)\n" for flag, count in dropped]
    unlocated = [r for r in results if r.outcome.status == "compile-error"
                 and not r.outcome.located]
    bad = [r for r in results if r.outcome.status in ("crash", "timeout")] + unlocated
    if bad:
        parts.append("\n## Crashes, hangs and errors without a location\n\n")
        parts += [f"- {r.job.target.label} {failure_line(r)}\n" for r in bad]
    parts.append("\n## Every failure\n\n")
    for target in _targets(results):
        parts.append(f"\n### {target.label}\n\n")
        parts += [f"- {failure_line(r)}\n" for r in results
                  if r.job.target == target and not r.outcome.passed]
    return "".join(parts)


def to_json(results: Sequence[Result], command: str) -> dict[str, object]:
    return {
        "command": command,
        "results": [{
            "file": r.job.name, "folder": r.job.folder, "backend": r.job.target.backend,
            "device": r.job.target.device, "status": r.outcome.status,
            "reason": r.outcome.reason, "located": r.outcome.located,
            "seconds": round(r.seconds, 2), "compile_flags": list(r.job.compile_flags),
            "dropped_flags": list(r.job.dropped_flags), "iree_suite": r.job.iree_suite,
            "iree_runs": r.job.iree_runs, "notes": list(r.job.notes),
        } for r in results],
    }
