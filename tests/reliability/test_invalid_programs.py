"""Programs MLIR rejects that weir used to compile and run (a collapse that dropped elements, a
yield converted behind the user's back, an out-of-range constant index) or that crashed it (an
"internal error" from tensor.dim, a dimension past 2^63 failing at no location): through the
real `weir-compile` entry point, each gives exactly one located line and exit code 1, and writes
nothing. The lit files tests/compiler/input/verify_*_errors.mlir cover every check; this table
covers the command a user runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import weir.api as weir
from weir.tools.compile import main


@dataclass(frozen=True)
class Case:
    """A program and the one diagnostic it must produce: at `line:col`, saying `message`."""

    id: str
    source: str
    line: int
    col: int
    message: str


CASES = [
    Case("collapse_shape losing elements",
         "func.func @f(%a: tensor<2x4xf32>) -> tensor<6xf32> {\n"
         "  %0 = tensor.collapse_shape %a [[0, 1]] : tensor<2x4xf32> into tensor<6xf32>\n"
         "  return %0 : tensor<6xf32>\n}\n", 2, 3,
         "'tensor.collapse_shape' op result dimension 0 is 6, but source dimensions [0, 1] of "
         "sizes 2 x 4 hold 8 element(s)"),
    Case("generic yielding an i32 into f32",
         "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
         "  %c = arith.constant 1 : i32\n"
         "  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, "
         "affine_map<(d0) -> (d0)>], iterator_types = [\"parallel\"]} ins(%a : tensor<4xf32>) "
         "outs(%a : tensor<4xf32>) {\n"
         "  ^bb0(%x: f32, %y: f32):\n"
         "    linalg.yield %c : i32\n"
         "  } -> tensor<4xf32>\n"
         "  return %0 : tensor<4xf32>\n}\n", 5, 5,
         "'linalg.yield' op value #0 has type i32, but output #0 of the enclosing "
         "'linalg.generic' has element type f32"),
    Case("extract at a constant index past the end",
         "func.func @f(%a: tensor<4xf32>) -> f32 {\n"
         "  %c9 = arith.constant 9 : index\n"
         "  %0 = tensor.extract %a[%c9] : tensor<4xf32>\n"
         "  return %0 : f32\n}\n", 3, 3,
         "'tensor.extract' op index 9 is out of range for dimension 0 of tensor<4xf32> (size 4)"),
    Case("dim at a constant index past the rank",
         "func.func @f(%a: tensor<?xf32>) -> index {\n"
         "  %c5 = arith.constant 5 : index\n"
         "  %0 = tensor.dim %a, %c5 : tensor<?xf32>\n"
         "  return %0 : index\n}\n", 3, 3,
         "'tensor.dim' op index 5 is out of range for tensor<?xf32>, whose dimensions are 0 to 0"),
    Case("dimension of 2^63",
         "func.func @f(%a: tensor<9223372036854775808xf32>) -> tensor<9223372036854775808xf32> {\n"
         "  return %a : tensor<9223372036854775808xf32>\n}\n", 1, 1,
         "'func.func' op dimension 9223372036854775808 of tensor<9223372036854775808xf32> is "
         "larger than 9223372036854775807, the largest a dimension can be"),
    Case("dimension of 2^64",
         "func.func @f() -> tensor<18446744073709551616xf32> {\n"
         "  %0 = tensor.empty() : tensor<18446744073709551616xf32>\n"
         "  return %0 : tensor<18446744073709551616xf32>\n}\n", 2, 3,
         "'tensor.empty' op dimension 18446744073709551616 of tensor<18446744073709551616xf32> "
         "is larger than 9223372036854775807, the largest a dimension can be"),
    Case("scf.if yielding another type",
         "func.func @f(%c: i1, %a: tensor<4xf32>, %b: tensor<5xf32>) -> tensor<4xf32> {\n"
         "  %0 = scf.if %c -> (tensor<4xf32>) {\n    scf.yield %a : tensor<4xf32>\n"
         "  } else {\n    scf.yield %b : tensor<5xf32>\n  }\n"
         "  return %0 : tensor<4xf32>\n}\n", 2, 3,
         "'scf.if' op the else region yields (tensor<5xf32>), but the results are "
         "(tensor<4xf32>)"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_invalid_program_gives_one_located_line_and_no_output(
        case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "bad.mlir"
    source.write_text(case.source)
    code = main([str(source), "-o", str(tmp_path / "bad.wvm")])
    captured = capsys.readouterr()
    assert (code, captured.out) == (1, "")
    assert captured.err == f"{source}:{case.line}:{case.col}: error: {case.message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mlir"]


def test_fill_converts_its_value_as_mlir_does() -> None:
    """Not an error: MLIR's linalg.fill casts its value to the output's element type (signed for
    integers), so an i32 5 fills an f32 tensor with 5.0."""
    source = ("func.func @f() -> tensor<4xf32> {\n  %c = arith.constant 5 : i32\n"
              "  %e = tensor.empty() : tensor<4xf32>\n"
              "  %0 = linalg.fill ins(%c : i32) outs(%e : tensor<4xf32>) -> tensor<4xf32>\n"
              "  return %0 : tensor<4xf32>\n}\n")
    module = weir.compile_string(source, "fill.mlir",
                                 weir.CompilerOptions(target_backends=("reference",)))
    result = weir.load([module], device="local-sync").lookup_function("f")()
    np.testing.assert_array_equal(np.asarray(result), np.full(4, 5.0, np.float32))
