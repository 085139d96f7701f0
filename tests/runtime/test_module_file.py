"""The module file codec: round trip, header checks, and that no malformed input ever escapes as
anything but ModuleFormatError."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from runtime_builders import fn, mul_module

from weir.errors import ModuleFormatError
from weir.format.image import Block, ExportDef, ImportDef, Signature
from weir.format.module_file import (
    HEADER,
    HEADER_SIZE,
    MAGIC,
    VERSION,
    deserialize,
    load_file,
    serialize,
)
from weir.format.vm_isa import Branch, Call, Const, Return
from weir.runtime.vm.bytecode_module import BytecodeModule


def _reseal(data: bytes, metadata: bytes) -> bytes:
    """A file with `metadata` swapped in and a *valid* checksum, so verification must catch it."""
    (old_len,) = struct.unpack_from("<Q", data, HEADER_SIZE)
    old_end = HEADER_SIZE + 8 + old_len
    old_area = (old_end + 63) // 64 * 64
    segments = data[old_area:]
    end = HEADER_SIZE + 8 + len(metadata)
    area = (end + 63) // 64 * 64
    body = struct.pack("<Q", len(metadata)) + metadata + b"\0" * (area - end) + segments
    return HEADER.pack(MAGIC, VERSION, 0, len(body), hashlib.sha256(body).digest()) + body


def _metadata(data: bytes) -> dict[str, Any]:
    (n,) = struct.unpack_from("<Q", data, HEADER_SIZE)
    return json.loads(data[HEADER_SIZE + 8:HEADER_SIZE + 8 + n])  # type: ignore[no-any-return]


def _placed(data: bytes, misalignment: int) -> memoryview:
    """`data` in memory that starts `misalignment` bytes past a 64-byte boundary."""
    room = np.zeros(len(data) + 128, np.uint8)
    start = -room.ctypes.data % 64 + misalignment
    room[start:start + len(data)] = np.frombuffer(data, np.uint8)
    return memoryview(room[start:start + len(data)])


def _address(segment: memoryview) -> int:
    return int(np.frombuffer(segment, np.uint8).ctypes.data)


def test_round_trip_keeps_everything_and_maps_segments() -> None:
    image = mul_module()
    data = _placed(serialize(image), 0)
    loaded = deserialize(data)
    assert loaded == image  # segments are excluded from equality
    assert bytes(loaded.segments[0]) == bytes(image.segments[0])
    assert loaded.segments[0].obj is data.obj  # a view into the input, not a copy
    assert loaded.segments[0].readonly


@pytest.mark.parametrize("misalignment", [8, 16, 32])
def test_segments_of_a_misaligned_input_are_copied_aligned(misalignment: int) -> None:
    """bytes lie wherever the allocator put them: the segment area is copied to a 64-byte
    boundary, so constants read with vector loads do not straddle cache lines."""
    image = mul_module()
    loaded = deserialize(_placed(serialize(image), misalignment))
    assert bytes(loaded.segments[0]) == bytes(image.segments[0])
    assert all(_address(seg) % 64 == 0 for seg in loaded.segments if len(seg))
    assert loaded.segments[0].readonly


def test_segments_are_64_byte_aligned_in_the_file() -> None:
    data = serialize(mul_module())
    meta = _metadata(data)
    (n,) = struct.unpack_from("<Q", data, HEADER_SIZE)
    area = (HEADER_SIZE + 8 + n + 63) // 64 * 64
    assert area % 64 == 0 and all(off % 64 == 0 for off, _ in meta["segments"])


def test_load_file_uses_mmap(tmp_path: Path) -> None:
    path = tmp_path / "m.wvm"
    path.write_bytes(serialize(mul_module()))
    image = load_file(path)
    assert image.name == "module"
    assert type(image.segments[0].obj).__name__ == "mmap"


def test_load_file_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ModuleFormatError, match="cannot read module file"):
        load_file(tmp_path / "missing.wvm")
    (tmp_path / "empty.wvm").write_bytes(b"")
    with pytest.raises(ModuleFormatError, match="empty.wvm: empty module file"):
        load_file(tmp_path / "empty.wvm")


@pytest.mark.parametrize("mutate, message", [
    (lambda d: b"NOTAMOD\0" + d[8:], "not a weir module file"),
    (lambda d: d[:8] + struct.pack("<I", 1) + d[12:], "unsupported module format version 1"),
    (lambda d: d[:12] + struct.pack("<I", 1) + d[16:], "unsupported module flags"),
    (lambda d: d[:-10], "truncated module file"),
    (lambda d: d[:20], "truncated module file"),
    (lambda d: d + b"x", "trailing bytes"),
    (lambda d: d[:100] + bytes([d[100] ^ 1]) + d[101:], "checksum mismatch: the module file is corrupted"),
])
def test_header_problems(mutate: Any, message: str) -> None:
    with pytest.raises(ModuleFormatError, match=message):
        deserialize(mutate(serialize(mul_module())))


def test_accepts_memoryview_and_bytearray() -> None:
    data = serialize(mul_module())
    assert deserialize(memoryview(data)).name == "module"
    assert deserialize(bytearray(data)).name == "module"


def test_any_byte_flip_is_caught_by_the_checksum() -> None:
    data = serialize(mul_module())
    rng = random.Random(1)
    for _ in range(200):
        i = rng.randrange(HEADER_SIZE, len(data))
        bad = data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]
        with pytest.raises(ModuleFormatError, match="checksum mismatch"):
            deserialize(bad)


def test_resealed_byte_mutations_of_the_metadata_fail_cleanly() -> None:
    data = serialize(mul_module())
    (n,) = struct.unpack_from("<Q", data, HEADER_SIZE)
    meta = data[HEADER_SIZE + 8:HEADER_SIZE + 8 + n]
    rng = random.Random(2)
    for _ in range(400):
        m = bytearray(meta)
        for _ in range(rng.randrange(1, 4)):
            m[rng.randrange(len(m))] = rng.choice(b'0123456789[]{},:"-x.ae ')
        try:
            deserialize(_reseal(data, bytes(m)))
        except ModuleFormatError:
            pass


def _mutations(value: Any, rng: random.Random) -> Any:
    """Replaces one random node of a JSON tree with a value of a (probably) wrong type."""
    replacements = [None, -1, 0, 7, 10**6, 1.5, "x", "hal.nope", [], [1], {}, True, [[1, 2]]]
    if isinstance(value, (list, dict)) and value and rng.random() < 0.85:
        keys = list(range(len(value))) if isinstance(value, list) else list(value)
        k = rng.choice(keys)
        value[k] = _mutations(value[k], rng)
        return value
    return rng.choice(replacements)


def test_resealed_structural_mutations_fail_cleanly() -> None:
    data = serialize(mul_module())
    rng = random.Random(3)
    outcomes = {"error": 0, "ok": 0}
    for _ in range(1500):
        meta = _mutations(_metadata(data), rng)
        try:
            image = deserialize(_reseal(data, json.dumps(meta).encode()))
            BytecodeModule(image)  # whatever loads must also translate
            outcomes["ok"] += 1
        except ModuleFormatError as e:
            assert "\n" not in str(e)
            outcomes["error"] += 1
    assert outcomes["error"] > 1000


def _bad(image: Any, message: str) -> None:
    with pytest.raises(ModuleFormatError, match=message):
        serialize(image)
    # The loader finds the same problem in a file written by a producer that skipped verification.
    good = serialize(mul_module())
    from weir.format.module_json import image_to_json
    meta = image_to_json(image, _metadata(good)["segments"])
    with pytest.raises(ModuleFormatError, match=message):
        deserialize(_reseal(good, json.dumps(meta).encode()))


def _replace_fn(image: Any, index: int, **changes: Any) -> Any:
    fns = list(image.functions)
    fns[index] = dataclasses.replace(fns[index], **changes)
    return dataclasses.replace(image, functions=tuple(fns))


def test_verification_failures() -> None:
    img = mul_module()
    main = img.functions[1]
    blk = main.blocks[0]
    _bad(_replace_fn(img, 1, num_registers=5), "register 20 out of range")
    _bad(_replace_fn(img, 1, blocks=(Block(blk.params, blk.instructions[:-1]),)),
         "does not end with a terminator")
    _bad(_replace_fn(img, 1, blocks=(Block(blk.params, (Return((0,)),) + blk.instructions),)),
         "terminator in the middle")
    _bad(_replace_fn(img, 1, blocks=(Block((0,), blk.instructions),)),
         "entry block has 1 parameter")
    _bad(_replace_fn(img, 1, blocks=(Block(blk.params, (Branch(3),)),)), "block 3 out of range")
    _bad(_replace_fn(img, 1, blocks=(Block(blk.params, (Branch(0, (1,)),)),)),
         "passes 1 argument")
    _bad(_replace_fn(img, 1, blocks=(Block(blk.params, (Call((), "hal.nope", ()), Return((0,)))),)),
         "neither a function of this module nor a declared import")
    _bad(_replace_fn(img, 1, blocks=(Block(blk.params, (Call((), "hal.device.get", ()), Return((0,)))),)),
         "passes 0 argument")
    _bad(_replace_fn(img, 1, blocks=(Block(blk.params, (Return(()),)),)), "returns 0 value")
    _bad(dataclasses.replace(img, exports=(ExportDef("mul", 9),)), "function index 9 out of range")
    _bad(dataclasses.replace(img, initializer="nope"), "initializer 'nope'")
    _bad(dataclasses.replace(img, imports=img.imports + (ImportDef("nodot", Signature.parse("0_")),)),
         "is not 'module.function'")
    g = fn("g", "0_", 1, (), [Const(0, 1), Return(())])
    _bad(dataclasses.replace(img, functions=img.functions + (g, g)), "duplicate function name 'g'")


def test_unknown_opcode_and_op_names() -> None:
    data = serialize(mul_module())
    meta = _metadata(data)
    meta["functions"][0]["blocks"][0]["instructions"][0] = ["jump", 1]
    with pytest.raises(ModuleFormatError, match="unknown opcode 'jump'"):
        deserialize(_reseal(data, json.dumps(meta).encode()))
    meta = _metadata(data)
    meta["functions"][0]["blocks"][0]["instructions"][0] = ["binary", 0, "pow", 0, 0]
    with pytest.raises(ModuleFormatError, match="unknown binary op 'pow'"):
        deserialize(_reseal(data, json.dumps(meta).encode()))
    meta = _metadata(data)
    meta["functions"][1]["signature"] = "0rq_r"
    with pytest.raises(ModuleFormatError, match="unknown value type 'q'"):
        deserialize(_reseal(data, json.dumps(meta).encode()))
    meta = _metadata(data)
    meta["executables"][0]["variants"][0]["segment"] = 4
    with pytest.raises(ModuleFormatError, match="segment 4 out of range"):
        deserialize(_reseal(data, json.dumps(meta).encode()))
    with pytest.raises(ModuleFormatError, match="not valid JSON"):
        deserialize(_reseal(data, b"{not json"))


# Regressions found by the module fuzzer (tests/reliability): each class of defect once.


def _resealed(change: Any) -> bytes:
    data = serialize(mul_module())
    meta = _metadata(data)
    change(meta)
    return _reseal(data, json.dumps(meta).encode())


@pytest.mark.parametrize("change, message", [
    # A misspelt key used to be ignored (its default taken): every field is required, no other.
    (lambda m: m["exports"][0].__setitem__("reflec4ion", m["exports"][0].pop("reflection")),
     "unknown field 'reflec4ion'"),
    (lambda m: m["imports"][0].pop("model"), "missing field 'model'"),
    (lambda m: m.pop("initializer"), "missing field 'initializer'"),
    (lambda m: m.__setitem__("extra", 1), "unknown field 'extra'"),
    # Names and constant strings are printable: every message quoting one stays on one line.
    (lambda m: m["functions"][0].__setitem__("name", "a\nb"), "unprintable"),
    (lambda m: m["functions"][1]["blocks"][0]["instructions"][0].__setitem__(2, "x\ny"),
     "unprintable"),
    # Integers beyond 64 bits, as indices or constants.
    (lambda m: m["exports"][0].__setitem__("function", 2**64), "out of range"),
    (lambda m: m["functions"][1]["blocks"][0]["instructions"][0].__setitem__(2, 2**70),
     "does not fit 64 bits"),
    # A segment nothing uses, or a payload two executables share: a damaged segment table.
    (lambda m: m["segments"].append(m["segments"][0]), r"segments\[1\]: not used"),
    # A payload that describes other entry points than its executable declares.
    (lambda m: m["executables"][0].__setitem__("entry_points", ["other"]),
     "the payload has entry points 'mul_dispatch_0', the executable declares 'other'"),
    # The ABI reflection the API relies on must fit the signature, not be dropped as advice.
    (lambda m: m["exports"][0]["reflection"].append(["weir.abi.scalar_types", "i8;r"]),
     "lists 1 argument"),
    (lambda m: m["imports"][0].__setitem__("model", "coarse-fences"),
     r"must end its arguments with two fences \(rr\), its signature is 0i_r"),
])
def test_resealed_metadata_defects(change: Any, message: str) -> None:
    with pytest.raises(ModuleFormatError, match=message) as info:
        deserialize(_resealed(change))
    assert "\n" not in str(info.value)


def test_json_integers_python_refuses_to_parse_are_format_errors() -> None:
    """json.loads raises a ValueError that is not a JSONDecodeError for over 4,300 digits."""
    data = serialize(mul_module())
    with pytest.raises(ModuleFormatError, match="not valid JSON"):
        deserialize(_reseal(data, b'{"name": ' + b"1" * 5000 + b"}"))
