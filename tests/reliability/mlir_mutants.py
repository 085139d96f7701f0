"""Seeded mutations of MLIR text for the compiler-input fuzz (test_compile_fuzz.py).

Why mutate real programs rather than generate random text: random bytes stop at the first
token, while a program with one token dropped, repeated, swapped or borrowed from another
program reaches the verifiers and the passes behind the parser, where a crash would hide.
Every mutant is a pure function of (seed, case index), so a failure names its case and
reproduces from that alone.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# MLIR's lexical units, coarsely: strings, SSA values and symbols, types and identifiers,
# numbers, arrows and single punctuation. Whitespace is kept as its own token so that joining
# the tokens gives the text back exactly.
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[%@#^!][\w$.-]*|\d[\w.+-]*|[A-Za-z_][\w$.]*|->|\s+|.',
                    re.S)


def tokens(text: str) -> list[str]:
    """The text as tokens whose concatenation is the text."""
    return _TOKEN.findall(text)


@dataclass(frozen=True)
class Mutant:
    """One mutated program: what was done (for the failure message) and the resulting bytes."""

    case: int
    source: str
    mutation: str
    data: bytes


def _positions(toks: Sequence[str]) -> list[int]:
    """Indices of the tokens worth mutating (not whitespace)."""
    return [i for i, t in enumerate(toks) if not t.isspace()]


def _delete_token(rng: random.Random, text: str, others: Sequence[str]) -> tuple[str, bytes]:
    toks = tokens(text)
    i = rng.choice(_positions(toks))
    what = toks[i]
    del toks[i]
    return f"delete token {what!r}", "".join(toks).encode()


def _duplicate_token(rng: random.Random, text: str, others: Sequence[str]) -> tuple[str, bytes]:
    toks = tokens(text)
    i = rng.choice(_positions(toks))
    toks.insert(i, toks[i])
    return f"duplicate token {toks[i]!r}", "".join(toks).encode()


def _swap_tokens(rng: random.Random, text: str, others: Sequence[str]) -> tuple[str, bytes]:
    toks = tokens(text)
    positions = _positions(toks)
    i, j = rng.sample(positions, 2) if len(positions) > 1 else (positions[0], positions[0])
    toks[i], toks[j] = toks[j], toks[i]
    return f"swap tokens {toks[j]!r} and {toks[i]!r}", "".join(toks).encode()


def _borrow_token(rng: random.Random, text: str, others: Sequence[str]) -> tuple[str, bytes]:
    """A token replaced by one of the same program or another: types, ops and values that
    parse but do not fit (`f32` for `i32`, `arith.addi` for `arith.addf`, `%5` for `%1`)."""
    toks = tokens(text)
    donor = tokens(rng.choice(others))
    i = rng.choice(_positions(toks))
    new = donor[rng.choice(_positions(donor))]
    old, toks[i] = toks[i], new
    return f"replace token {old!r} with {new!r}", "".join(toks).encode()


def _kind(token: str) -> str:
    """A coarse class of a token, so that a borrowed token is of the same class."""
    if token[0] in "%@#^!":
        return token[0]
    if token[0].isdigit():
        return "shape" if "x" in token else "number"
    if token[0].isalpha() or token[0] == "_":
        return "op" if "." in token else "word"
    return "punctuation"


def _borrow_same_kind(rng: random.Random, text: str, others: Sequence[str]) -> tuple[str, bytes]:
    """A token replaced by another of its class (a value name, a shape like `4xf32`, an op
    name, a number): mutants that still parse and so reach the verifiers and the passes."""
    toks = tokens(text)
    i = rng.choice(_positions(toks))
    kind = _kind(toks[i])
    pool = [t for t in tokens(rng.choice(others)) + toks if not t.isspace() and _kind(t) == kind]
    new = rng.choice(pool)
    old, toks[i] = toks[i], new
    return f"replace token {old!r} with {new!r}", "".join(toks).encode()


def _flip_byte(rng: random.Random, text: str, others: Sequence[str]) -> tuple[str, bytes]:
    data = bytearray(text.encode())
    i = rng.randrange(len(data))
    if rng.random() < 0.5:
        data[i] ^= 1 << rng.randrange(8)
    else:
        data[i] = rng.randrange(256)
    return f"change byte {i}", bytes(data)


def _truncate(rng: random.Random, text: str, others: Sequence[str]) -> tuple[str, bytes]:
    data = text.encode()
    n = rng.randrange(len(data))
    return f"truncate to {n} bytes", data[:n]


def _splice(rng: random.Random, text: str, others: Sequence[str]) -> tuple[str, bytes]:
    """The head of this program joined to the tail of another, at token boundaries."""
    head, tail = tokens(text), tokens(rng.choice(others))
    i, j = rng.randrange(len(head) + 1), rng.randrange(len(tail) + 1)
    return f"splice {i} tokens with another program's tail from token {j}", \
        "".join(head[:i] + tail[j:]).encode()


def _insert_number(rng: random.Random, text: str, others: Sequence[str]) -> tuple[str, bytes]:
    """A number replaced by an extreme one: sizes, indices and constants out of range."""
    toks = tokens(text)
    numbers = [i for i, t in enumerate(toks) if t[0].isdigit()]
    if not numbers:
        return _borrow_token(rng, text, others)
    i = rng.choice(numbers)
    new = rng.choice(["0", "1", "-1", "3", "65536", "4294967296", "99999999999999999999",
                      "1.5", "1e400", "0x7FC00000"])
    old, toks[i] = toks[i], new
    return f"replace number {old!r} with {new!r}", "".join(toks).encode()


MUTATIONS: tuple[Callable[[random.Random, str, Sequence[str]], tuple[str, bytes]], ...] = (
    _delete_token, _duplicate_token, _swap_tokens, _borrow_token, _borrow_same_kind,
    _borrow_same_kind, _borrow_same_kind, _flip_byte, _truncate, _splice, _insert_number,
)


def mutant(seed: int, case: int, corpus: Sequence[tuple[str, str]]) -> Mutant:
    """Case `case` of the run seeded with `seed`: one to three mutations of one corpus program
    (`corpus` holds (name, text) pairs)."""
    rng = random.Random(seed * 1_000_003 + case)
    name, text = corpus[rng.randrange(len(corpus))]
    others = [t for _, t in corpus]
    done: list[str] = []
    data = text.encode()
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        current = data.decode("utf-8", errors="replace")
        if not current.strip():
            break
        op = rng.choice(MUTATIONS)
        what, data = op(rng, current, others)
        done.append(what)
    return Mutant(case, name, "; ".join(done), data)
