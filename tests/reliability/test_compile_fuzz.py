"""A seeded mutation fuzz of the compiler's input: real programs (samples/ and the e2e check
programs) with tokens deleted, repeated, swapped or borrowed, bytes changed, the text cut short or
spliced with another program (tests/reliability/mlir_mutants.py), each compiled in process for
the reference target (every fourth for llvm-cpu too).

Every outcome must be a module, or exactly one printable line `fuzz.mlir:LINE:COL: error: ...`
inside the file. A failure is anything else: an exception that is not a `WeirError` (which
`weir-compile` prints as "internal error"), an error with no location or a location outside the
file, a message over several lines, or a crash of xDSL that the parser's last line of defence
caught and reported ("is malformed", kept as the error's cause): each of those is a defect to fix.

`make test` runs a fixed seed and a few hundred cases; `make stress` (`--stress`) several
thousand. A failure names its case, which `mutant(SEED, case, corpus)` rebuilds exactly.
"""

from __future__ import annotations

import re
import signal
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from mlir_mutants import Mutant, mutant

from weir.compiler.api import compile_string
from weir.compiler.options import CompilerOptions, TargetDevice
from weir.errors import CompileError, WeirError
from weir.tools.cli import error_line

ROOT = Path(__file__).resolve().parents[2]
SEED = 20_250_607
FAST_CASES, STRESS_CASES = 400, 6000
HANG_LIMIT_S = 120  # far beyond any compile here (the slowest take about a second)

# Exceptions that are diagnostics by design; anything else in an error's cause chain is a crash
# that the parser's last line of defence turned into an error.
DIAGNOSTIC_CAUSES = ("ParseError", "MultipleSpansParseError", "VerifyException", "CompileError")
LOCATED = re.compile(r"fuzz\.mlir:(\d+):(\d+): error: \S")
DEVICE_FLAG = re.compile(r"--iree-hal-target-device=(\w+)=local\[(\d+)\]")


def corpus() -> list[tuple[str, str]]:
    files = sorted((ROOT / "samples").glob("**/*.mlir")) + \
        sorted((ROOT / "tests" / "e2e" / "check").glob("*.mlir"))
    return [(str(f.relative_to(ROOT)), f.read_text()) for f in files]


def options_for(text: str, target: str) -> CompilerOptions:
    """The target devices a program's own header comment compiles it with (the multi-device
    samples name theirs), so that mutants of it get past device resolution."""
    devices = tuple(TargetDevice(name, "local", int(ordinal))
                    for name, ordinal in dict(DEVICE_FLAG.findall(text)).items())
    return CompilerOptions(target_backends=(target,), target_devices=devices)


class Hang(BaseException):
    """A compile that ran past HANG_LIMIT_S (a BaseException, so that no `except Exception` on
    the way turns it into a diagnostic)."""


@contextmanager
def hang_guard() -> Iterator[None]:
    """Turns a compile that never ends into a failure of its case instead of a stuck run (a
    Python-level loop; a hang inside one C call, like the regular expression `WeirLexer`
    replaces, can only be noticed once that call returns)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise Hang(f"no result after {HANG_LIMIT_S} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(HANG_LIMIT_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def masked_crash(error: BaseException) -> BaseException | None:
    cause = error.__cause__
    while cause is not None:
        if type(cause).__name__ not in DIAGNOSTIC_CAUSES:
            return cause
        cause = cause.__cause__
    return None


def outcome(m: Mutant, programs: dict[str, str], target: str) -> tuple[str, str]:
    """('ok' | 'error' | 'failure', detail) for one mutant on one target."""
    try:
        with hang_guard():
            compile_string(m.data, "fuzz.mlir", options_for(programs[m.source], target))
    except CompileError as e:
        text = str(e)
        located = LOCATED.match(text)
        lines = m.data.count(b"\n") + 1
        if error_line("weir-compile", text) != text or located is None or \
                not 1 <= int(located[1]) <= lines or not text.isprintable():
            return "failure", f"badly formed diagnostic: {text!r}"
        if (crash := masked_crash(e)) is not None:
            return "failure", f"xDSL crash reported as a diagnostic ({type(crash).__name__}): {text}"
        return "error", text
    except Hang as e:
        return "failure", f"hang: {e}"
    except WeirError as e:
        return "failure", f"{type(e).__name__} without a location: {e}"
    except Exception as e:  # noqa: BLE001 - exactly what this test looks for
        return "failure", f"internal error {type(e).__name__}: {e}"
    return "ok", ""


def test_mutated_programs_compile_or_give_one_located_line(stress: bool) -> None:
    programs = corpus()
    by_name = dict(programs)
    counts: Counter[str] = Counter()
    failures: list[str] = []
    for case in range(STRESS_CASES if stress else FAST_CASES):
        m = mutant(SEED, case, programs)
        targets = ["reference", "llvm-cpu"] if case % 4 == 3 else ["reference"]
        for target in targets:
            kind, detail = outcome(m, by_name, target)
            counts[kind] += 1
            if kind == "failure":
                failures.append(f"case {case} ({m.source}: {m.mutation}) on {target}: {detail}")
    print(f"compile fuzz, seed {SEED}: {sum(counts.values())} compiles, {counts['ok']} modules, "
          f"{counts['error']} located errors, {counts['failure']} failures")
    assert not failures, "\n".join(failures[:20])
    assert counts["ok"] > 0 and counts["error"] > 0  # the mutants reach both outcomes


def test_mutants_are_reproducible() -> None:
    programs = corpus()
    assert [mutant(SEED, c, programs).data for c in range(20)] == \
        [mutant(SEED, c, programs).data for c in range(20)]
    assert len({mutant(SEED, c, programs).data for c in range(20)}) == 20


@pytest.mark.parametrize("data", [
    b"", b"\x00" * 64, bytes(range(256)), b"\xff" * 300, "func.func @f(".encode() * 500,
    # An unterminated string used to backtrack exponentially in xDSL's lexer (a hang).
    b'func.func @f() attributes {x = "' + b"ab " * 100 + b"\n}\n",
])
def test_garbage_is_one_located_line(data: bytes) -> None:
    m = Mutant(0, "samples/simple_mul/simple_mul.mlir", "garbage", data)
    kind, detail = outcome(m, dict(corpus()), "reference")
    assert kind == "error", detail
