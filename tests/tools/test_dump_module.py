"""weir-dump-module over module files built by hand with `weir.format.module_file`."""

from __future__ import annotations

from pathlib import Path

import pytest

from weir.format import module_file
from weir.format.kernel_codec import encode_reference_executable
from weir.format.image import (
    Block,
    ExecutableDef,
    ExecutableVariant,
    ExportDef,
    FunctionDef,
    GlobalDef,
    ImportDef,
    ModuleImage,
    RodataDef,
    Signature,
)
from weir.format.vm_isa import (
    Binary,
    Branch,
    Call,
    CondBranch,
    Const,
    GlobalLoad,
    GlobalStore,
    Return,
    Rodata,
)
from weir.format.kernel_description import EntryPoint, Load, ReferenceExecutable, Store
from weir.tools.dump_module import main

# A payload the verifier accepts: entry points entry_a and entry_b, as the executable declares.
PAYLOAD = encode_reference_executable(ReferenceExecutable(tuple(
    EntryPoint(name, 1, 0, (Load(0, "f32", (4,), 0), Store(0, 0, 0)))
    for name in ("entry_a", "entry_b"))))


def sample_image() -> ModuleImage:
    run = FunctionDef("run", Signature.parse("0rr_r"), 10, (
        Block((0, 1), (
            Const(2, 0),
            Call((3,), "hal.device.get", (2,)),
            Call((4,), "hal.fence.create", (3,)),
            Rodata(5, 0),
            GlobalLoad(6, 0),
            Binary(7, "eq", 2, 2),
            CondBranch(7, 1, (4,), 1, (4,)),
        )),
        Block((8,), (GlobalStore(0, 6), Branch(2))),
        Block((), (Const(9, "done"), Return((0,)))),
    ))
    return ModuleImage(
        name="pipeline",
        dependencies=(),
        imports=(ImportDef("hal.device.get", Signature.parse("0i_r")),
                 ImportDef("hal.fence.create", Signature.parse("0r_r"))),
        exports=(ExportDef("run", 0, "coarse-fences",
                           (("iree.abi.declaration", "async func @run(%a: tensor<4xf32>)"),)),),
        functions=(run,),
        globals=(GlobalDef("counter", "i", 0),),
        rodata=(RodataDef("weights", 0),),
        executables=(ExecutableDef("dispatch_0", ("entry_a", "entry_b"),
                                   (ExecutableVariant("reference", "reference", 1),)),),
        segments=(memoryview(b"\x01" * 100), memoryview(PAYLOAD)),
    )


@pytest.fixture()
def module_path(tmp_path: Path) -> Path:
    path = tmp_path / "m.wvm"
    path.write_bytes(module_file.serialize(sample_image()))
    return path


def test_sections(capsys, module_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert main([str(module_path)]) == 0
    out = capsys.readouterr().out
    size = module_path.stat().st_size
    for expected in [
        f"module file: {module_path}", f"  size: {size} bytes", "  format version: 2",
        "name: pipeline",
        "  [0] @hal.device.get  cconv 0i_r  model sync",
        "  [0] @run -> function 0 (@run)  cconv 0rr_r  model coarse-fences",
        "        iree.abi.declaration = async func @run(%a: tensor<4xf32>)",
        "  [0] @run  cconv 0rr_r  registers 10  blocks 3  instructions 11",
        "    ^bb0(%r0, %r1):",
        "      %r3 = call @hal.device.get(%r2)",
        "      %r5 = rodata @weights",
        "      %r6 = global.load @counter",
        "      %r7 = eq %r2, %r2",
        "      cond_br %r7, ^bb1(%r4), ^bb1(%r4)",
        "    ^bb1(%r8):",
        "      global.store %r6, @counter",
        "      br ^bb2",
        '      %r9 = const "done"',
        "      return %r0",
        "  [0] @counter : i = 0",
        "  [0] @weights  100 bytes  segment 0  alignment 64",
        "  [0] @dispatch_0  entry points: entry_a, entry_b",
        f"        variant target reference  format reference  payload {len(PAYLOAD)} bytes  "
        "segment 1",
        "segments (2):",
    ]:
        assert expected in out.splitlines(), expected
    assert "  checksum: sha256 ok (" in out
    segment_lines = [line for line in out.splitlines() if "file offset" in line]
    offsets = [int(line.split("file offset ")[1].split()[0]) for line in segment_lines]
    data = module_path.read_bytes()
    assert data[offsets[0]:offsets[0] + 100] == b"\x01" * 100
    assert data[offsets[1]:offsets[1] + len(PAYLOAD)] == PAYLOAD
    assert all(o % 64 == 0 for o in offsets)


def test_summary_hides_instructions(capsys, module_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert main(["--summary", str(module_path)]) == 0
    out = capsys.readouterr().out
    assert "instructions 11" in out and "^bb0" not in out


def test_corrupted_file_is_one_line(capsys, module_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = bytearray(module_path.read_bytes())
    data[-1] ^= 0xFF
    module_path.write_bytes(bytes(data))
    assert main([str(module_path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"weir-dump-module: error: {module_path}: checksum mismatch: the "
                            f"module file is corrupted\n")


@pytest.mark.parametrize("argv,message", [
    ([], "missing argument; usage: weir-dump-module [flags] FILE"),
    (["/nonexistent.wvm"], "cannot read '/nonexistent.wvm'"),
    (["--bogus", "x"], "unknown flag '--bogus'"),
])
def test_usage_errors(capsys, argv: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("weir-dump-module: error: ") and message in err and err.count("\n") == 1


def test_help(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: weir-dump-module [flags] FILE")
