"""weir-run-module on compiled modules whose arguments and results use every element type:
`--output=@file.npy` keeps each result's dtype (tensors and scalars), bare `--input` scalars are
read as the type the function declares (`i8`, `f16`, ...) and printed as it (`i8=-56`; i1 and
index results as the i32 and i64 IREE's VM holds them in), and a value its type cannot hold is
one error line naming the argument."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import weir.api as weir
from weir.tools import run_module

TYPES = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
         "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}


def _module(tmp_path: Path, source: str) -> str:
    path = tmp_path / "m.wvm"
    path.write_bytes(weir.compile_string(source, "m.mlir"))
    return str(path)


@pytest.mark.parametrize("t", TYPES)
def test_npy_outputs_keep_the_dtype_of_tensor_and_scalar_results(tmp_path: Path, t: str,
                                                                  capsys) -> None:  # type: ignore[no-untyped-def]
    op = "arith.xori" if t == "i1" else "arith.addf" if t[0] in "fb" else "arith.addi"
    source = f"""
    func.func @f(%x: tensor<2x3x{t}>, %s: {t}) -> (tensor<2x3x{t}>, {t}) {{
      %0 = {op} %x, %x : tensor<2x3x{t}>
      %1 = {op} %s, %s : {t}
      return %0, %1 : tensor<2x3x{t}>, {t}
    }}"""
    module = _module(tmp_path, source)
    out = tmp_path / "out.npy"
    dtype = np.dtype(TYPES[t])
    x = (np.arange(6).reshape(2, 3) % 2 if t == "i1" else np.arange(6).reshape(2, 3)).astype(dtype)
    np.save(tmp_path / "x.npy", x)
    assert run_module.main([f"--module={module}", "--function=f", f"--input=@{tmp_path}/x.npy",
                            "--input=1", f"--output=@{out}", f"--output=+{out}"]) == 0
    capsys.readouterr()
    with open(out, "rb") as f:
        tensor, scalar = np.load(f), np.load(f)
    if t == "bf16":  # plain numpy stores bf16 as its raw 16 bits ('V2')
        tensor, scalar = tensor.view(ml_dtypes.bfloat16), scalar.view(ml_dtypes.bfloat16)
    # An i1 scalar is written as the i32 IREE's VM holds it in (an i1 tensor stays i1).
    scalar_dtype = np.dtype(np.int32) if t == "i1" else dtype
    assert tensor.dtype == dtype and scalar.dtype == scalar_dtype and scalar.shape == ()
    if t == "i1":
        np.testing.assert_array_equal(tensor, np.zeros((2, 3), bool))
        assert scalar == 0  # 1 xor 1
    else:
        np.testing.assert_array_equal(tensor, x + x)
        assert scalar == 2


def test_bare_scalars_take_the_declared_type(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    module = _module(tmp_path, """
    func.func @f(%a: i8, %h: f16, %p: i1, %n: index) -> (i8, f16, i1, index) {
      %0 = arith.addi %a, %a : i8
      %1 = arith.mulf %h, %h : f16
      %t = arith.constant true
      %2 = arith.xori %p, %t : i1
      %3 = arith.addi %n, %n : index
      return %0, %1, %2, %3 : i8, f16, i1, index
    }""")
    argv = [f"--module={module}", "--function=f", "--input=100", "--input=0.1", "--input=0",
            "--input=21"]
    assert run_module.main(argv) == 0
    out = capsys.readouterr().out
    assert out == ("EXEC @f\nresult[0]: i8=-56\nresult[1]: f16=0.00999451\n"
                   "result[2]: i32=1\nresult[3]: i64=42\n")
    assert run_module.main([*argv, "--expected_output=-56", "--expected_output=0.00999451",
                            "--expected_output=1", "--expected_output=42"]) == 0
    assert "[SUCCESS]" in capsys.readouterr().out


def test_i1_and_index_scalar_results_are_i32_and_i64_as_iree_gives_them(
        tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """IREE's VM has no i1 or index registers: an i1 result is an i32 (`result[0]: i32=1`, a
    0-d int32 in an npy file, an int32 from the API), an index result an i64. An i1 tensor
    stays i1 and prints its bytes, `2xi1=01 00`, as iree-run-module does."""
    module = _module(tmp_path, """
    func.func @f(%a: f32, %b: f32, %v: tensor<2xf32>) -> (i1, index, tensor<2xi1>) {
      %0 = arith.cmpf olt, %a, %b : f32
      %c3 = arith.constant 3 : index
      %1 = arith.cmpf olt, %v, %v : tensor<2xf32>
      return %0, %c3, %1 : i1, index, tensor<2xi1>
    }""")
    argv = [f"--module={module}", "--function=f", "--input=1", "--input=2", "--input=2xf32=1"]
    assert run_module.main(argv) == 0
    assert capsys.readouterr().out == ("EXEC @f\nresult[0]: i32=1\nresult[1]: i64=3\n"
                                       "result[2]: hal.buffer_view\n2xi1=00 00\n")
    out = tmp_path / "out.npy"
    assert run_module.main([*argv, f"--output=@{out}", f"--output=+{out}", "--output="]) == 0
    with open(out, "rb") as f:
        flag, index = np.load(f), np.load(f)
    assert (flag.dtype, flag.shape, int(flag)) == (np.dtype(np.int32), (), 1)
    assert (index.dtype, int(index)) == (np.dtype(np.int64), 3)
    assert run_module.main([*argv, "--expected_output=1", "--expected_output=i64=3",
                            "--expected_output=(ignored)"]) == 0
    assert "[SUCCESS]" in capsys.readouterr().out
    with weir.load([Path(module).read_bytes()]) as ctx:
        flag, index, _ = ctx.lookup_function("f")(1.0, 2.0, np.ones(2, np.float32))
    assert (type(flag), flag, type(index), index) == (np.int32, 1, np.int64, 3)


def test_a_scalar_its_type_cannot_hold_is_one_error_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    module = _module(tmp_path, """
    func.func @f(%a: i8, %x: tensor<2xf32>) -> i8 {
      return %a : i8
    }""")
    assert run_module.main([f"--module={module}", "--function=f", "--input=1000",
                            "--input=2xf32=1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument 0 is i8" in err and "out of range" in err
    assert run_module.main([f"--module={module}", "--function=f", "--input=2.5",
                            "--input=2xf32=1"]) == 1
    assert "argument 0 is i8" in capsys.readouterr().err


def test_sub_byte_integers_at_the_command_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """i4 values read in IREE's text form (the unsigned spelling 15 is -1, as `i8=255` is), wrap
    in arithmetic, print as signed values and compare with --expected_output; i4 scalars too."""
    module = _module(tmp_path, """
    func.func @f(%x: tensor<4xi4>, %s: i4) -> (tensor<4xi4>, i4) {
      %0 = arith.addi %x, %x : tensor<4xi4>
      %1 = arith.addi %s, %s : i4
      return %0, %1 : tensor<4xi4>, i4
    }""")
    args = [f"--module={module}", "--function=f", "--input=4xi4=1,-3,7,15", "--input=5"]
    assert run_module.main(args) == 0
    assert capsys.readouterr().out == ("EXEC @f\nresult[0]: hal.buffer_view\n4xi4=2 -6 -2 -2\n"
                                       "result[1]: i4=-6\n")
    assert run_module.main([*args, "--expected_output=4xi4=2,-6,-2,-2",
                            "--expected_output=i4=-6"]) == 0
    assert "[SUCCESS]" in capsys.readouterr().out
    assert run_module.main([*args, "--expected_output=4xi4=2,-6,-2,14"]) == 1
    assert run_module.main([*args[:2], "--input=4xi4=1,2,3,16", "--input=1"]) == 1
    assert "16 is out of range for i4 [-8, 15]" in capsys.readouterr().err


def test_small_floats_at_the_command_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """f8/f4 values read through f32 as IREE's parser does (0.3 rounds to 0.3125 in f8E4M3FN),
    printed with %G, NaN included, and compared with --expected_output."""
    module = _module(tmp_path, """
    func.func @f(%x: tensor<4xf8E4M3FN>, %y: tensor<2xf4E2M1FN>)
        -> (tensor<4xf8E4M3FN>, tensor<2xf4E2M1FN>) {
      %0 = arith.addf %x, %x : tensor<4xf8E4M3FN>
      %1 = arith.mulf %y, %y : tensor<2xf4E2M1FN>
      return %0, %1 : tensor<4xf8E4M3FN>, tensor<2xf4E2M1FN>
    }""")
    args = [f"--module={module}", "--function=f", "--input=4xf8E4M3FN=1,0.3,300,nan",
            "--input=2xf4E2M1FN=1.5,-3"]
    assert run_module.main(args) == 0
    assert capsys.readouterr().out == ("EXEC @f\nresult[0]: hal.buffer_view\n"
                                       "4xf8E4M3FN=2 0.625 NAN NAN\nresult[1]: hal.buffer_view\n"
                                       "2xf4E2M1FN=2 6\n")
    assert run_module.main([*args, "--expected_output=4xf8E4M3FN=2,0.625,nan,nan",
                            "--expected_output=2xf4E2M1FN=2,6"]) == 0
    assert "[SUCCESS]" in capsys.readouterr().out
    assert run_module.main([*args, "--expected_output=4xf8E4M3FN=2,0.5,nan,nan",
                            "--expected_output=2xf4E2M1FN=2,6"]) == 1


def test_dump_module_shows_typed_scalar_math(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from weir.tools import dump_module
    module = _module(tmp_path, """
    func.func @f(%a: i8, %b: i8) -> (i1, i32) {
      %0 = arith.cmpi ult, %a, %b : i8
      %1 = arith.extsi %a : i8 to i32
      return %0, %1 : i1, i32
    }""")
    assert dump_module.main([module]) == 0
    out = capsys.readouterr().out
    assert "%r2 = arith.cmpi ult %r0, %r1 : i8 -> i1" in out
    assert "%r3 = arith.extsi %r0 : i8 -> i32" in out
