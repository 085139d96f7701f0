"""Bad compiler input through the real `weir-compile` entry point (in process): each case gives
exactly one line, `file:line:col: error: ...` at the token or op at fault (or
`weir-compile: error: ...` for a bad flag), exit code 1, nothing on stdout, and no output file,
and an existing output file is left as it was. tests/tools/compile_errors.test covers the same
promise through a subprocess for a syntax error, a bad backend, an unknown flag and an empty
file; this table covers what users actually get wrong."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from weir.tools.compile import main

# A function header most cases start from: `%a` is a tensor<4xf32>, line 1.
F = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
END = "  return %a : tensor<4xf32>\n}\n"


@dataclass(frozen=True)
class Case:
    """A program and the one diagnostic it must produce: at `line:col`, saying `message`."""

    id: str
    source: str | bytes
    line: int
    col: int
    message: str


# Every element type weir compiles, as the errors list them.
SUPPORTED = ("i1, i2, i4, i8, i16, i32, i64, ui8, ui16, ui32, ui64, f16, bf16, f32, f64, "
             "f8E5M2, f8E4M3, f8E3M4, f8E4M3FN, f8E4M3FNUZ, f8E5M2FNUZ, "
             "f8E4M3B11FNUZ, f6E2M3FN, f6E3M2FN, f4E2M1FN, f8E8M0FNU, index")

CASES = [
    # -- not a program at all -------------------------------------------------------------------
    Case("empty file", "", 1, 1, "empty input: expected a module"),
    Case("only a comment", "  \n// nothing here\n", 1, 1, "empty input: expected a module"),
    Case("binary with NUL", b"\x7fELF\x02\x01\x01\x00\x00", 1, 8,
         "unexpected NUL byte in input (is this a binary file?)"),
    Case("bytes that are not UTF-8", b"\x89PNG\r\n", 1, 1,
         "unexpected bytes that are not UTF-8 text (is this a binary file?)"),
    Case("control character", "module {\n  \x1b[0m\n}\n", 2, 3,
         "unexpected control character U+001B (is this a binary file?)"),
    Case("character no token starts with", F + "  %0 = arith.addf %a, %a : tensor<4xf32> `\n" + END,
         2, 42, "unexpected character '`'"),
    Case("non-ASCII letter", F + "  %0 = arith.addf %a, %a : tensor<4xf32>\n  é\n" + END, 3, 3,
         "unexpected character 'é' (U+00E9); MLIR names, numbers and punctuation are ASCII"),
    Case("unterminated string", F + '  %0 = arith.addf %a, %a {x = "abc} : tensor<4xf32>\n' + END,
         2, 31, "string literal is not closed before the end of the line"),
    Case("bad escape in string", F + '  %0 = arith.addf %a, %a {x = "a\\qb"} : tensor<4xf32>\n'
         + END, 2, 31, "invalid escape '\\qb' in string literal (valid: \\\", \\\\, \\n, \\t and two "
                       "hex digits)"),
    # -- structure ------------------------------------------------------------------------------
    Case("missing closing brace", F + "  %0 = arith.addf %a, %a : tensor<4xf32>\n"
         "  return %0 : tensor<4xf32>\n", 4, 1, "expected an operation, a block label or '}' "
         "closing the region opened at 1:50, got the end of the input"),
    Case("stray closing brace", F + END + "}\n", 4, 1,
         "expected an operation at the top level, got '}'"),
    Case("trailing garbage", F + END + "xyz\n", 4, 1, "Operation xyz is not registered"),
    Case("missing parenthesis", "func.func @f(%a: tensor<4xf32> -> tensor<4xf32> {\n" + END, 1, 32,
         "')' expected, got '->'"),
    Case("unclosed type", "func.func @f(%a: tensor<4xf32) -> tensor<4xf32> {\n" + END, 1, 30,
         "Expected '>' after builtin parameter list, got ')'"),
    Case("nested too deeply", "func.func @f() {\n  %0 = arith.constant dense<" + "[" * 3000 + "1"
         + "]" * 3000 + "> : tensor<1xf32>\n  return\n}\n", 2, 3, "input is nested too deeply"),
    Case("function defined twice", F + END + F + END, 4, 1,
         "redefinition of symbol @f (first defined at 1:1)"),
    Case("no terminator", F + "  %0 = arith.addf %a, %a : tensor<4xf32>\n}\n", 2, 3,
         "'arith.addf' op Operation arith.addf terminates block in single-block region but is "
         "not a terminator"),
    Case("linalg.yield ends a function", F + "  linalg.yield %a : tensor<4xf32>\n}\n", 2, 3,
         "'linalg.yield' op expects its parent op to be a linalg op, got 'func.func'"),
    # -- ops, dialects, values ------------------------------------------------------------------
    Case("unknown op", F + "  %0 = arith.frob %a, %a : tensor<4xf32>\n" + END, 2, 8,
         "Operation arith.frob is not registered"),
    Case("unknown dialect", F + "  %0 = tosa.add %a, %a : tensor<4xf32>\n" + END, 2, 8,
         "Operation tosa.add is not registered"),
    Case("unknown dialect attribute", F + "  %0 = arith.addf %a, %a {x = #foo.bar} : "
         "tensor<4xf32>\n" + END, 2, 39, "'foo.bar' is not registered"),
    Case("unknown dialect type", "func.func @f(%a: !foo.bar) {\n  return\n}\n", 1, 26,
         "'foo.bar' is not registered"),
    Case("unsupported op", F + "  %0 = math.trunc %a : tensor<4xf32>\n" + END, 2, 3,
         "'math.trunc' is not supported"),
    Case("wrong operand count", F + "  %0 = arith.addf %a : tensor<4xf32>\n" + END, 2, 22,
         "Expected ',', got ':'"),
    Case("wrong operand count, generic form", F + '  %0 = "arith.addf"(%a) : (tensor<4xf32>) -> '
         "tensor<4xf32>\n" + END, 2, 3, "'arith.addf' op Expected 2 operands, but got 1"),
    Case("undefined value", F + "  %0 = arith.addf %a, %b : tensor<4xf32>\n" + END, 2, 23,
         "use of undefined value '%b'"),
    Case("value defined twice", F + "  %x = arith.addf %a, %a : tensor<4xf32>\n"
         "  %x = arith.mulf %a, %a : tensor<4xf32>\n" + END, 3, 3,
         "'%x' is already defined (first defined at 2:3)"),
    Case("value used before its definition", F + "  %x = arith.addf %a, %y : tensor<4xf32>\n"
         "  %y = arith.mulf %a, %a : tensor<4xf32>\n" + END, 2, 3,
         "'%y' is used before its definition"),
    Case("value used by its own op", F + "  %x = arith.addf %a, %x : tensor<4xf32>\n" + END, 2, 3,
         "'%x' is used by the op that defines it"),
    Case("unknown function in call", F + "  %0 = call @g(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
         + END, 2, 3, "'func.call' op '@g' could not be found in symbol table"),
    Case("call with the wrong result type", F + "  %0 = call @f(%a) : (tensor<4xf32>) -> "
         "tensor<4xi32>\n" + END, 2, 3, "'func.call' op result type mismatch: expected result "
         "type tensor<4xf32>, but provided tensor<4xi32> for result number 0"),
    Case("recursion", F + "  %0 = call @f(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
         "  return %0 : tensor<4xf32>\n}\n", 2, 3,
         "recursive call to @f is not supported (calls within a module are inlined)"),
    Case("unknown comparison predicate", F + "  %0 = arith.cmpf xyz, %a, %a : tensor<4xf32>\n"
         + END, 2, 3, "'arith.cmpf' op Unknown comparison mnemonic: xyz"),
    # -- types ----------------------------------------------------------------------------------
    Case("operand written with another type", F + "  %0 = arith.addf %a, %a : tensor<4xi32>\n"
         + END, 2, 19, "'%a' has type tensor<4xf32>, but 'arith.addf' is written with type "
                       "tensor<4xi32>"),
    Case("operand written with another shape", F + "  %0 = arith.addf %a, %a : tensor<5xf32>\n"
         + END, 2, 19, "'%a' has type tensor<4xf32>, but is used here as tensor<5xf32>"),
    Case("scalar used as a tensor", F + "  %c = arith.constant 1.0 : f32\n"
         "  %0 = arith.addf %a, %c : tensor<4xf32>\n" + END, 3, 23,
         "'%c' has type f32, but is used here as tensor<4xf32>"),
    Case("mismatched return", F + "  return %a, %a : tensor<4xf32>, tensor<4xf32>\n}\n", 2, 3,
         "'func.return' op Expected arguments to have the same types as the function output "
         "types: expected [tensor<4xf32>], got [tensor<4xf32>, tensor<4xf32>]"),
    Case("return with another type", F + "  return %a : tensor<4xi32>\n}\n", 2, 10,
         "'%a' has type tensor<4xf32>, but is used here as tensor<4xi32>"),
    Case("unknown element type", F + "  %0 = arith.addf %a, %a : tensor<4xq7>\n" + END, 2, 37,
         "expected an element type in the shape, got 'q7'"),
    Case("negative dimension", "func.func @f(%a: tensor<-4xf32>) {\n  return\n}\n", 1, 25,
         "a dimension size must be a non-negative integer or '?'"),
    Case("shape without element type", "func.func @f(%a: tensor<4>) {\n  return\n}\n", 1, 26,
         "expected 'x' after a dimension of the shape, got '>'"),
    Case("memref argument", "func.func @f(%a: memref<4xf32>) {\n  return\n}\n", 1, 1,
         "type memref<4xf32> is not supported: weir compiles ranked tensors and scalars of "
         f"{SUPPORTED}"),
    Case("tensor of complex", "func.func @f(%a: tensor<4xcomplex<f32>>) {\n  return\n}\n", 1, 1,
         "element type complex<f32> of tensor<4xcomplex<f32>> is not supported (supported: "
         f"{SUPPORTED})"),
    Case("tensor of i3", "func.func @f(%a: tensor<4xi3>) {\n  return\n}\n", 1, 1,
         f"element type i3 of tensor<4xi3> is not supported (supported: {SUPPORTED})"),
    # -- constants ------------------------------------------------------------------------------
    Case("dense literal of the wrong shape", F + "  %c = arith.constant dense<[1.0, 2.0]> : "
         "tensor<4xf32>\n  return %c : tensor<4xf32>\n}\n", 2, 28,
         "Shape mismatch in dense literal. Expected [4] shape from the type, but got [2] shape."),
    Case("dense literal with a word", F + "  %c = arith.constant dense<[1.0, 2.0, 3.0, abc]> : "
         "tensor<4xf32>\n" + END, 2, 45,
         "Expected either a float, integer, or complex literal, got 'abc'"),
    Case("dense literal out of range", F + "  %c = arith.constant dense<300> : tensor<4xi8>\n"
         + END, 2, 28, "Integer value 300 is out of range for type i8 which supports values in "
                       "the range [-128, 256)"),
    Case("dense literal too large for memory", F + "  %c = arith.constant dense<1.0> : "
         "tensor<99999999999xf32>\n" + END, 2, 36, "a dense literal of type "
         "tensor<99999999999xf32> would hold 399999999996 bytes; at most 1073741824 are supported"),
    Case("complex literal", F + "  %c = arith.constant dense<(1.0, 2.0)> : tensor<4xf32>\n" + END,
         2, 29, "complex literals '(re, im)' are not supported: weir has no complex element types"),
    # A float literal too large for its type is not an error: it becomes +-inf, as MLIR reads
    # it (tests/compiler/ir/test_ir_float_overflow.py).
    Case("index constant out of range", F + "  %c = arith.constant 99999999999999999999999 : "
         "index\n" + END, 2, 23,
         "integer constant 99999999999999999999999 is out of range for index (64 bits)"),
    Case("float constant of an integer type", F + "  %c = arith.constant 1.5 : i32\n" + END, 2, 23,
         "Floating point value is not valid for integer type."),
    # -- linalg ---------------------------------------------------------------------------------
    Case("transpose with a bad permutation", "func.func @f(%a: tensor<2x3xf32>, %b: "
         "tensor<3x2xf32>) -> tensor<3x2xf32> {\n  %t = linalg.transpose ins(%a : tensor<2x3xf32>) "
         "outs(%b : tensor<3x2xf32>) permutation = [7, 0]\n  return %t : tensor<3x2xf32>\n}\n",
         2, 3, "'linalg.transpose' op permutation [7, 0]: 7 is not a dimension of a rank-2 operand"),
    Case("fill without its value", F + "  %0 = linalg.fill outs(%a : tensor<4xf32>) -> "
         "tensor<4xf32>\n" + END, 2, 3, "'linalg.fill' op expects 1 input (the value) and 1 "
         "output, got 0 and 1"),
    Case("fill with a mistyped ins", F + "  %z = arith.constant 0.0 : f32\n  %0 = linalg.fill "
         "insx(%z : f32) outs(%a : tensor<4xf32>) -> tensor<4xf32>\n" + END, 3, 3,
         "'linalg.fill' op is missing operands: give its inputs as ins(...) and its outputs as "
         "outs(...)"),
    Case("generic with a word for its maps", F + "  %0 = linalg.generic {indexing_maps = 3, "
         'iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) {\n'
         "  ^bb0(%x: f32, %y: f32):\n    linalg.yield %x : f32\n  } -> tensor<4xf32>\n" + END, 2, 23,
         "linalg.generic: 'indexing_maps' must be an array of affine maps, got 3 : i64"),
]


def _compile(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_program_gives_one_located_line_and_no_output(
        case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "bad.mlir"
    source.write_bytes(case.source if isinstance(case.source, bytes) else case.source.encode())
    output = tmp_path / "bad.wvm"
    code, out, err = _compile(tmp_path, capsys, [str(source), "-o", str(output)])
    assert (code, out) == (1, "")
    assert err == f"{source}:{case.line}:{case.col}: error: {case.message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mlir"]  # no output, no temp file


def test_a_failed_compile_leaves_an_existing_output_as_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "bad.mlir"
    source.write_text(F + "  %0 = arith.addf %a, %a : tensor<4xi32>\n" + END)
    output = tmp_path / "out.wvm"
    output.write_bytes(b"the previous module")
    code, _, err = _compile(tmp_path, capsys, [str(source), "-o", str(output)])
    assert code == 1 and err.startswith(f"{source}:2:19: error: ")
    assert output.read_bytes() == b"the previous module"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mlir", "out.wvm"]


def test_a_good_compile_replaces_an_existing_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "good.mlir"
    source.write_text(F + END)
    output = tmp_path / "out.wvm"
    output.write_bytes(b"the previous module")
    assert _compile(tmp_path, capsys, [str(source), "-o", str(output)]) == (0, "", "")
    assert output.read_bytes().startswith(b"WEIRMOD")


def test_phase_dumps_stop_at_the_failing_phase_with_whole_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A program that parses and passes the input phase but fails later (a device affinity no
    target device declares fails in the abi phase): the input phase's dump is there, whole; no
    later phase's, no temporary file and no module."""
    source = tmp_path / "late.mlir"
    source.write_text("func.func @f(%a: tensor<4xf32> {iree.abi.affinity = "
                      "#hal.device.promise<@elsewhere>}) -> tensor<4xf32> {\n" + END)
    dumps = tmp_path / "phases"
    code, _, err = _compile(tmp_path, capsys, [str(source), f"--dump-compilation-phases-to={dumps}",
                                               "-o", str(tmp_path / "late.wvm")])
    assert code == 1 and err.count("\n") == 1
    assert err.startswith(f"{source}:1:1: error: device @elsewhere is not a target device")
    assert sorted(p.name for p in dumps.iterdir()) == ["late.input.mlir"]
    assert (dumps / "late.input.mlir").read_text().rstrip().endswith("}")
    assert not (tmp_path / "late.wvm").exists()


def test_a_parse_error_dumps_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "bad.mlir"
    source.write_text(F)
    dumps = tmp_path / "phases"
    code, _, _ = _compile(tmp_path, capsys, [str(source), f"--dump-compilation-phases-to={dumps}"])
    assert code == 1 and not dumps.exists()


SIMPLE = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"


@pytest.mark.parametrize("flags, message", [
    (["--no-such-flag"], "unknown flag '--no-such-flag'; see 'weir-compile --help'"),
    (["--iree-hal-target-backends=nope"],
     "unknown target backend 'nope' (available: llvm-cpu, null, reference, vmvx)"),
    (["--compile-to=nope"],
     "--compile-to: 'nope' is not a phase (phases: input, abi, global-optimization, flow, "
     "stream, hal, vm)"),
    (["--iree-execution-model=x"],
     "--iree-execution-model: 'x' is not one of async-internal, async-external"),
    (["--iree-hal-target-device=cuda"],
     "--iree-hal-target-device='cuda': device kind 'cuda' is not supported (supported: local)"),
    (["--weir-stream-elide-transfers=maybe"],
     "flag '--weir-stream-elide-transfers' takes true or false, not 'maybe'"),
    (["--iree-llvmcpu-target-cpu=nope", "--iree-hal-target-backends=llvm-cpu"],
     "--iree-llvmcpu-target-cpu: unknown CPU 'nope' (known: host, x86-64, generic, x86-64-v2, "
     "x86-64-v3, x86-64-v4)"),
    (["--iree-llvmcpu-target-cpu-features=+nope", "--iree-hal-target-backends=llvm-cpu"],
     "--iree-llvmcpu-target-cpu-features: 'nope' is not a CPU feature LLVM knows for "),
    (["-o", ""], "-o needs a file name ('-' for stdout)"),
    (["-o", "{tmp}"], "'{tmp}': Is a directory (expected a file name)"),
    (["-o", "{tmp}/no/such/dir/x.wvm"],
     "'{tmp}/no/such/dir/x.wvm': cannot create a file in '{tmp}/no/such/dir': No such file or "
     "directory"),
    (["--dump-compilation-phases-to={tmp}/ok.mlir"],
     "--dump-compilation-phases-to: '{tmp}/ok.mlir' is not a directory"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_flags_give_one_usage_line(flags: list[str], message: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "ok.mlir"
    source.write_text(SIMPLE)
    argv = [f.replace("{tmp}", str(tmp_path)) for f in flags]
    code, out, err = _compile(tmp_path, capsys, [str(source), *argv])
    assert (code, out) == (1, "")
    assert err.startswith("weir-compile: error: " + message.replace("{tmp}", str(tmp_path)))
    assert err.count("\n") == 1 and "internal error" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.mlir"]


@pytest.mark.parametrize("argv, message", [
    ([], "missing argument; usage: weir-compile [flags] INPUT.mlir (or - for stdin)"),
    (["{tmp}/missing.mlir"], "'{tmp}/missing.mlir': No such file or directory"),
    (["{tmp}"], "'{tmp}': Is a directory"),
])
def test_a_missing_or_unreadable_input_is_one_line(argv: list[str], message: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _compile(tmp_path, capsys, [a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert (code, out) == (1, "")
    assert err == "weir-compile: error: " + message.replace("{tmp}", str(tmp_path)) + "\n"
