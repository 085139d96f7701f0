"""The layout of a well-formed module file as the fuzzer sees it: where the metadata, each segment
and the native object code lie; how to put a file back together after one part changed (a
producer that writes consistent lengths and a valid checksum around a wrong value); and what
changed between two loadable files, to tell a mutation of data the file legitimately carries
(constants) from one of its program."""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from typing import Any

from weir.format.module_file import HEADER, HEADER_SIZE, MAGIC, SEGMENT_ALIGNMENT, VERSION
from weir.format.native_executable import object_code_span

_META_LENGTH = struct.Struct("<Q")
_WNEX_HEADER = struct.Struct("<4sI")


def align(n: int) -> int:
    return (n + SEGMENT_ALIGNMENT - 1) // SEGMENT_ALIGNMENT * SEGMENT_ALIGNMENT


def compact(value: Any) -> bytes:
    """JSON as the producers write it."""
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


@dataclass(frozen=True)
class Segment:
    start: int  # absolute offset in the file
    length: int
    kind: str  # "rodata", "reference", "llvm-cpu" or "other"

    @property
    def end(self) -> int:
        return self.start + self.length


@dataclass(frozen=True)
class Layout:
    metadata: dict[str, Any]
    meta_start: int  # absolute: the JSON text
    meta_end: int
    area_start: int
    segments: tuple[Segment, ...]

    def native_objects(self, data: bytes) -> list[tuple[int, int]]:
        """Absolute [start, end) of the object code of every llvm-cpu payload."""
        spans = []
        for seg in self.segments:
            if seg.kind == "llvm-cpu":
                start, end = object_code_span(data[seg.start:seg.end])
                spans.append((seg.start + start, seg.start + end))
        return spans

    def region_of(self, data: bytes, position: int) -> str:
        """Names the part of the file a byte position falls in."""
        if position < HEADER_SIZE:
            return "header"
        if position < self.meta_start:
            return "metadata length"
        if position < self.meta_end:
            return "metadata"
        for k, seg in enumerate(self.segments):
            if seg.start <= position < seg.end:
                if seg.kind == "llvm-cpu":
                    start, _ = object_code_span(data[seg.start:seg.end])
                    part = "descriptor" if position - seg.start < start else "object code"
                    return f"segment {k} (llvm-cpu {part})"
                return f"segment {k} ({seg.kind})"
        return "padding"


def parse_layout(data: bytes) -> Layout:
    """The layout of a module file the compiler wrote (not checked: the input is known good)."""
    (meta_length,) = _META_LENGTH.unpack_from(data, HEADER_SIZE)
    meta_start = HEADER_SIZE + _META_LENGTH.size
    meta_end = meta_start + meta_length
    metadata = json.loads(data[meta_start:meta_end])
    area_start = align(meta_end)
    kinds: dict[int, str] = {r["segment"]: "rodata" for r in metadata.get("rodata", [])}
    for exe in metadata.get("executables", []):
        for variant in exe["variants"]:
            fmt = variant["format"]
            kinds[variant["segment"]] = fmt if fmt in ("reference", "llvm-cpu") else "other"
    segments = tuple(Segment(area_start + offset, length, kinds.get(k, "other"))
                     for k, (offset, length) in enumerate(metadata["segments"]))
    return Layout(metadata, meta_start, meta_end, area_start, segments)


def reseal(body: bytes) -> bytes:
    """A header with the right length and checksum for `body`."""
    return HEADER.pack(MAGIC, VERSION, 0, len(body), hashlib.sha256(body).digest()) + body


def body_with_metadata(data: bytes, layout: Layout, metadata: bytes) -> bytes:
    """The body with `metadata` in place of the JSON, its length field updated and the segment
    area kept as it was (the segment table inside `metadata` is taken as written)."""
    end = HEADER_SIZE + _META_LENGTH.size + len(metadata)
    padding = b"\0" * (align(end) - end)
    return _META_LENGTH.pack(len(metadata)) + metadata + padding + data[layout.area_start:]


def body_with_segment(data: bytes, layout: Layout, index: int, payload: bytes) -> bytes:
    """The body with segment `index` replaced by `payload`: segments laid out again and the
    metadata's segment table rewritten, as a producer that writes a wrong payload would."""
    payloads = [data[s.start:s.end] for s in layout.segments]
    payloads[index] = payload
    placements, cursor = [], 0
    for p in payloads:
        placements.append([cursor, len(p)])
        cursor = align(cursor + len(p))
    metadata = dict(layout.metadata)
    metadata["segments"] = placements
    meta = compact(metadata)
    end = HEADER_SIZE + _META_LENGTH.size + len(meta)
    area = bytearray(cursor)
    for p, (offset, length) in zip(payloads, placements):
        area[offset:offset + length] = p
    return _META_LENGTH.pack(len(meta)) + meta + b"\0" * (align(end) - end) + bytes(area)


def split_descriptor(payload: bytes) -> tuple[bytes, bytes]:
    """An llvm-cpu payload as (descriptor JSON text, object code)."""
    start, _ = object_code_span(payload)
    return payload[_WNEX_HEADER.size:start], payload[start:]


def join_descriptor(text: bytes, objects: bytes) -> bytes:
    """An llvm-cpu payload whose header length matches `text`: the object code stays where the
    header says it is, so a mutated descriptor never shifts or changes native code."""
    return _WNEX_HEADER.pack(b"WNEX", len(text)) + text + objects


# ----------------------------------------------------------------------------------- landing


def _json_diff(a: Any, b: Any, path: tuple[Any, ...], out: list[tuple[Any, ...]]) -> None:
    if type(a) is not type(b):
        out.append(path)
    elif isinstance(a, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                out.append((*path, key))
            else:
                _json_diff(a[key], b[key], (*path, key), out)
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append(path)
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                _json_diff(x, y, (*path, i), out)
    elif a != b and not (a != a and b != b):  # NaN equals NaN here
        out.append(path)


def _at(tree: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        tree = tree[key]
    return tree


def _metadata_change(meta: dict[str, Any], path: tuple[Any, ...]) -> str | None:
    """The kind of data a changed metadata path holds, or None for program structure."""
    if len(path) == 7 and path[0] == "functions" and path[2] == "blocks" and \
            path[4] == "instructions" and path[6] == 2:
        ins = _at(meta, path[:6])
        if isinstance(ins, list) and ins and ins[0] == "const":
            return "VM constant"
    if len(path) == 3 and path[0] == "globals" and path[2] == "initial":
        return "global initial value"
    return None


def _kernel_change(payload: dict[str, Any], path: tuple[Any, ...]) -> str | None:
    """Constants inside a reference kernel: a fill value, a `constant` scalar op's value."""
    if path and path[-1] == "value":
        op = _at(payload, path[:-1])
        if isinstance(op, dict) and op.get("op") == "fill":
            return "kernel constant"
    if path and path[-1] == "attr":
        op = _at(payload, path[:-1])
        if isinstance(op, dict) and op.get("op") == "constant":
            return "kernel constant"
    return None


def _fmt(path: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def landing(original: bytes, mutant: bytes) -> list[tuple[str, bool]]:
    """What differs between two loadable module files, as (description, is data) pairs: data is
    what the file legitimately carries as values (constant segment bytes, VM and kernel
    constants, global initial values); anything else is the program itself."""
    a, b = parse_layout(original), parse_layout(mutant)
    changes: list[tuple[str, bool]] = []
    paths: list[tuple[Any, ...]] = []
    meta_a = {k: v for k, v in a.metadata.items() if k != "segments"}
    meta_b = {k: v for k, v in b.metadata.items() if k != "segments"}
    _json_diff(meta_a, meta_b, (), paths)
    for path in paths:
        kind = _metadata_change(meta_a, path) if path else None
        changes.append((f"metadata {_fmt(path)}" + (f" ({kind})" if kind else ""), kind is not None))
    if len(a.segments) != len(b.segments):
        changes.append(("segment count", False))
        return changes
    for k, (sa, sb) in enumerate(zip(a.segments, b.segments)):
        pa, pb = original[sa.start:sa.end], mutant[sb.start:sb.end]
        if pa == pb:
            continue
        if sa.kind == "rodata":
            changes.append((f"segment {k} (constant segment data)", True))
        elif sa.kind == "reference":
            kernel_paths: list[tuple[Any, ...]] = []
            ja, jb = json.loads(pa), json.loads(pb)
            _json_diff(ja, jb, (), kernel_paths)
            for path in kernel_paths:
                kind = _kernel_change(ja, path) if path else None
                changes.append((f"segment {k} reference {_fmt(path)}"
                                + (f" ({kind})" if kind else ""), kind is not None))
        elif sa.kind == "llvm-cpu":
            (ta, oa), (tb, ob) = split_descriptor(pa), split_descriptor(pb)
            desc_paths: list[tuple[Any, ...]] = []
            _json_diff(json.loads(ta), json.loads(tb), (), desc_paths)
            changes.extend((f"segment {k} llvm-cpu descriptor {_fmt(p)}", False) for p in desc_paths)
            if oa != ob:
                changes.append((f"segment {k} llvm-cpu object code", False))
        else:
            changes.append((f"segment {k} ({sa.kind})", False))
    return changes


# The fence operands of the calls that order a program's work: `hal.fence.await(timeout,
# fences)` and `hal.device.queue.*(device, wait, signal, ...)`.
def _fence_operands(ins: Any) -> tuple[int, ...]:
    if not (isinstance(ins, list) and len(ins) == 4 and ins[0] == "call"):
        return ()
    if ins[2] == "hal.fence.await":
        return (1,)
    return (1, 2) if str(ins[2]).startswith("hal.device.queue.") else ()


def only_changes_waits(original: bytes, mutant: bytes) -> bool:
    """True when the only change is to what a program waits for: a fence operand of a wait or a
    queue operation changed, or one `hal.fence.await` removed. Such a mutant may race with its
    own work, and its results then depend on timing."""
    a, b = parse_layout(original), parse_layout(mutant)
    if [original[s.start:s.end] for s in a.segments] != [mutant[s.start:s.end] for s in b.segments]:
        return False
    paths: list[tuple[Any, ...]] = []
    _json_diff({k: v for k, v in a.metadata.items() if k != "segments"},
               {k: v for k, v in b.metadata.items() if k != "segments"}, (), paths)
    for path in paths:
        if len(path) < 5 or path[0] != "functions" or path[4] != "instructions":
            return False
        if len(path) == 5:  # an instruction removed: it must have been a wait
            old, new = _at(a.metadata, path), _at(b.metadata, path)
            if len(old) != len(new) + 1:
                return False
            k = next((i for i, (x, y) in enumerate(zip(old, new)) if x != y), len(new))
            if old[:k] + old[k + 1:] != new or _fence_operands(old[k]) != (1,):
                return False
        elif len(path) < 8 or path[6] != 3 or path[7] not in _fence_operands(_at(a.metadata,
                                                                                  path[:6])):
            return False
    return bool(paths)
