"""The seeded mutation engine: one mutation of one module file per case, reproducible from
(seed, mode, case index) alone.

Two modes:
- `raw`: the file as a corruption would leave it (a byte changed, bits flipped, bytes inserted,
  the file cut short, a JSON value changed in place). The header's checksum must reject all.
- `resealed`: the body changed, then the header's length and checksum recomputed, as a buggy or
  hostile producer would write it; lengths inside the file are kept consistent where the
  mutation says so (a JSON value changed and the metadata re-serialised), left stale where it
  does not (a byte inserted into a segment). This reaches JSON decoding, verification, loading,
  instantiation and running.

Native object code inside an llvm-cpu payload is never changed in resealed mode: a module's
native code is trusted through the file's checksum only (it runs unchecked, so a producer that
writes wrong code is out of reach of any verifier). Its descriptor (the WNEX header's JSON
around the code) is mutated like any other JSON, with the header length kept consistent so the
code never shifts."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Callable

from fuzz_layout import (
    Layout,
    body_with_metadata,
    body_with_segment,
    compact,
    join_descriptor,
    parse_layout,
    reseal,
    split_descriptor,
)

from weir.format.module_file import HEADER_SIZE

MODES = ("raw", "resealed")
# Bytes that turn JSON into other valid JSON more often than random bytes do.
_JSON_BYTES = b'0123456789-+.,:[]{}" eEntrufalsx\\'
_HUGE = (2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64, 10**12, 10**30)
_CODE_STRINGS = ("__import__('os').system('true')", "x\ny", "a'b\"c", "}) or (lambda: 0)() #",
                 "\\", "\0", "é", "hal.device.get", "r1", "blk = 0\n")


@dataclass(frozen=True)
class Mutant:
    data: bytes
    kind: str  # substitute, bitflip, truncate, insert, delete, json
    where: str  # the part of the file the mutation landed in
    detail: str  # enough to understand the change without re-running


# ----------------------------------------------------------------------------------- JSON


def _nodes(tree: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(tree, dict):
        for key, value in tree.items():
            out.extend(_nodes(value, (*path, key)))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            out.extend(_nodes(value, (*path, i)))
    return out


def _strings(tree: Any) -> list[str]:
    if isinstance(tree, str):
        return [tree]
    if isinstance(tree, dict):
        return [s for k, v in tree.items() for s in [k, *_strings(v)]]
    if isinstance(tree, list):
        return [s for v in tree for s in _strings(v)]
    return []


def _replacement(value: Any, doc: Any, rng: random.Random) -> Any:
    """A value of the same kind changed a little, or one of another kind."""
    if isinstance(value, bool):
        return rng.choice([not value, 0, 1, "true", None])
    if isinstance(value, int):
        return rng.choice([0, -1, value + 1, value - 1, -value, rng.choice(_HUGE),
                           -rng.choice(_HUGE), value + 0.5, float(value), str(value), None,
                           [value], True])
    if isinstance(value, float):
        return rng.choice([0.0, -value, value * 2, float("nan"), float("inf"), -float("inf"),
                           1e308, int(value), str(value), None])
    if isinstance(value, str):
        others = [s for s in _strings(doc) if s != value]
        return rng.choice([rng.choice(others) if others else "", "", value + "x", value[:-1],
                           value.upper(), rng.choice(_CODE_STRINGS), 0, None, [value]])
    if value is None:
        return rng.choice([0, -1, "", [], {}, False, 1.5])
    if isinstance(value, list):
        return rng.choice([{}, None, 0, "[]"])
    return rng.choice([[], None, 0, "{}"])


def mutate_json(doc: Any, rng: random.Random) -> tuple[Any, str]:
    """One change to a copy of `doc`: a value replaced, a list item dropped, duplicated or two
    swapped, a key removed or renamed. Returns (new document, description); never `doc` itself
    (a change that changes nothing is drawn again)."""
    before = compact(doc)
    while True:
        new, detail = _mutate_json_once(doc, rng)
        if compact(new) != before:
            return new, detail


def _mutate_json_once(doc: Any, rng: random.Random) -> tuple[Any, str]:
    doc = json.loads(json.dumps(doc))
    path = rng.choice(_nodes(doc))
    here = "".join(f"[{p!r}]" for p in path) or "<root>"
    target = doc
    for key in path[:-1]:
        target = target[key]
    node = target[path[-1]] if path else doc
    action = rng.random()
    if isinstance(node, list) and node and action < 0.5:
        i = rng.randrange(len(node))
        choice = rng.choice(["drop", "duplicate", "swap", "empty"])
        if choice == "drop":
            del node[i]
        elif choice == "duplicate":
            node.insert(i, json.loads(json.dumps(node[i])))
        elif choice == "swap" and len(node) > 1:
            j = rng.randrange(len(node))
            node[i], node[j] = node[j], node[i]
            choice = f"swap {i}<->{j}"
        else:
            node.clear()
            choice = "empty"
        return doc, f"{here}: list item {i} {choice}"
    if isinstance(node, dict) and node and action < 0.5:
        key = rng.choice(list(node))
        if rng.random() < 0.7:
            del node[key]
            return doc, f"{here}: key {key!r} removed"
        node[key + "_"] = node.pop(key)
        return doc, f"{here}: key {key!r} renamed"
    new = _replacement(node, doc, rng)
    if not path:
        return new, f"<root>: {_short(node)} -> {_short(new)}"
    target[path[-1]] = new
    return doc, f"{here}: {_short(node)} -> {_short(new)}"


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ----------------------------------------------------------------------------------- bytes


def _new_byte(old: int, rng: random.Random) -> int:
    while True:
        b = rng.choice(_JSON_BYTES) if rng.random() < 0.5 else rng.randrange(256)
        if b != old:
            return b


def _insertion(rng: random.Random) -> bytes:
    n = rng.choice([1, 1, 1, 2, 4, 16])
    return bytes(rng.choice(_JSON_BYTES) if rng.random() < 0.5 else rng.randrange(256)
                 for _ in range(n))


def _free_positions(layout: Layout, data: bytes, start: int) -> Callable[[random.Random], int]:
    """A position at or after `start` that is not native object code."""
    protected = layout.native_objects(data)

    def pick(rng: random.Random) -> int:
        while True:
            p = rng.randrange(start, len(data))
            if not any(s <= p < e for s, e in protected):
                return p
    return pick


# ----------------------------------------------------------------------------------- documents


def _documents(data: bytes, layout: Layout) -> list[str]:
    """The JSON documents of a file: the metadata, each reference payload, each llvm-cpu
    descriptor."""
    docs = ["metadata"]
    for k, seg in enumerate(layout.segments):
        if seg.kind in ("reference", "llvm-cpu"):
            docs.append(f"segment {k}")
    return docs


def _rewrite_document(data: bytes, layout: Layout, doc: str,
                      change: Callable[[bytes], tuple[bytes, str]]) -> tuple[bytes, str]:
    """The body with the text of JSON document `doc` passed through `change` and the file laid
    out again around it (lengths consistent)."""
    if doc == "metadata":
        text, detail = change(data[layout.meta_start:layout.meta_end])
        return body_with_metadata(data, layout, text), detail
    k = int(doc.split()[1])
    seg = layout.segments[k]
    payload = data[seg.start:seg.end]
    if seg.kind == "llvm-cpu":
        text, objects = split_descriptor(payload)
        new_text, detail = change(text)
        return body_with_segment(data, layout, k, join_descriptor(new_text, objects)), detail
    new_payload, detail = change(payload)
    return body_with_segment(data, layout, k, new_payload), detail


def _doc_label(layout: Layout, doc: str) -> str:
    if doc == "metadata":
        return doc
    k = int(doc.split()[1])
    kind = layout.segments[k].kind
    return f"{doc} ({'llvm-cpu descriptor' if kind == 'llvm-cpu' else kind})"


def _json_change(rng: random.Random) -> Callable[[bytes], tuple[bytes, str]]:
    def change(text: bytes) -> tuple[bytes, str]:
        doc, detail = mutate_json(json.loads(text), rng)
        return compact(doc), detail
    return change


def _text_edit(rng: random.Random, insert: bool) -> Callable[[bytes], tuple[bytes, str]]:
    def change(text: bytes) -> tuple[bytes, str]:
        p = rng.randrange(len(text) + (1 if insert else 0))
        if insert:
            extra = _insertion(rng)
            return text[:p] + extra + text[p:], f"{len(extra)} byte(s) {extra!r} inserted at {p}"
        n = min(rng.choice([1, 1, 2, 8]), len(text) - p)
        return text[:p] + text[p + n:], f"{n} byte(s) {text[p:p + n]!r} deleted at {p}"
    return change


def _segment_text_targets(layout: Layout) -> list[str]:
    """Documents plus rodata segments: where region-level insertions and deletions go."""
    targets = ["metadata"]
    for k, seg in enumerate(layout.segments):
        if seg.kind in ("reference", "llvm-cpu", "rodata") and seg.length:
            targets.append(f"segment {k}")
    return targets


# ----------------------------------------------------------------------------------- mutate


_RAW_KINDS = (("substitute", 30), ("bitflip", 25), ("truncate", 15), ("insert", 15), ("json", 15))
_RESEALED_KINDS = (("substitute", 20), ("bitflip", 10), ("truncate", 5), ("insert", 10),
                   ("delete", 10), ("json", 45))


def _pick(weights: tuple[tuple[str, int], ...], rng: random.Random) -> str:
    return rng.choices([k for k, _ in weights], [w for _, w in weights])[0]


def mutate(data: bytes, mode: str, rng: random.Random) -> Mutant:
    """One mutation of the well-formed module file `data`."""
    layout = parse_layout(data)
    if mode == "raw":
        return _mutate_raw(data, layout, rng)
    if mode == "resealed":
        return _mutate_resealed(data, layout, rng)
    raise ValueError(f"unknown mode {mode!r} (expected one of {MODES})")


def _mutate_raw(data: bytes, layout: Layout, rng: random.Random) -> Mutant:
    kind = _pick(_RAW_KINDS, rng)
    if kind in ("substitute", "bitflip"):
        p = rng.randrange(len(data))
        new = _new_byte(data[p], rng) if kind == "substitute" else data[p] ^ (1 << rng.randrange(8))
        return Mutant(data[:p] + bytes([new]) + data[p + 1:], kind, layout.region_of(data, p),
                      f"byte {p}: 0x{data[p]:02x} -> 0x{new:02x}")
    if kind == "truncate":
        n = rng.randrange(len(data))
        return Mutant(data[:n], kind, layout.region_of(data, n), f"cut to {n} of {len(data)} bytes")
    if kind == "insert":
        p = rng.randrange(len(data) + 1)
        extra = _insertion(rng)
        return Mutant(data[:p] + extra + data[p:], kind,
                      layout.region_of(data, min(p, len(data) - 1)), f"{extra!r} inserted at {p}")
    doc = rng.choice(_documents(data, layout))
    body, detail = _rewrite_document(data, layout, doc, _json_change(rng))
    # The header is kept as it was: the change is a corruption, not a producer's rewrite.
    return Mutant(data[:HEADER_SIZE] + body, kind, _doc_label(layout, doc), detail)


def _mutate_resealed(data: bytes, layout: Layout, rng: random.Random) -> Mutant:
    kind = _pick(_RESEALED_KINDS, rng)
    if kind in ("substitute", "bitflip"):
        p = _free_positions(layout, data, HEADER_SIZE)(rng)
        new = _new_byte(data[p], rng) if kind == "substitute" else data[p] ^ (1 << rng.randrange(8))
        body = data[HEADER_SIZE:p] + bytes([new]) + data[p + 1:]
        return Mutant(reseal(body), kind, layout.region_of(data, p),
                      f"byte {p}: 0x{data[p]:02x} -> 0x{new:02x}")
    if kind == "truncate":
        n = rng.randrange(HEADER_SIZE, len(data))
        return Mutant(reseal(data[HEADER_SIZE:n]), kind, layout.region_of(data, n),
                      f"cut to {n} of {len(data)} bytes")
    if kind in ("insert", "delete"):
        doc = rng.choice(_segment_text_targets(layout))
        body, detail = _rewrite_document(data, layout, doc, _text_edit(rng, kind == "insert"))
        return Mutant(reseal(body), kind, _doc_label(layout, doc), detail)
    doc = rng.choice(_documents(data, layout))
    body, detail = _rewrite_document(data, layout, doc, _json_change(rng))
    return Mutant(reseal(body), kind, _doc_label(layout, doc), detail)
