"""The VM's typed scalar instruction (`Arith`), its verification, `hal.buffer.load`, and the
kernels' `push` op that reads a host scalar from a push constant."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from kernel_runner import run_kernel
from runtime_builders import fn, mul_module
from test_module_file import _bad as reject

from weir.errors import ModuleFormatError, RuntimeFault
from weir.format.image import ExportDef, ModuleImage
from weir.format.module_file import deserialize, serialize
from weir.format.kernel_codec import decode_reference_executable, encode_reference_executable
from weir.format.kernel_description import (
    Empty,
    EntryPoint,
    Generic,
    ReferenceExecutable,
    ScalarOp,
    Store,
)
from weir.format.vm_isa import Arith, Const, Instruction, Return
from weir.runtime.api import Context, Instance, load_module_bytes
from weir.runtime.hal.buffer import Allocator
from weir.runtime.modules.hal import HalModule


def _image(body: list[Instruction], cconv: str, nreg: int, params: tuple[int, ...]) -> ModuleImage:
    return ModuleImage(name="m", dependencies=(), imports=(), exports=(ExportDef("f", 0),),
                       functions=(fn("f", cconv, nreg, params, body),))


def _call(body: list[Instruction], cconv: str, nreg: int, params: tuple[int, ...],
          *args: Any) -> Any:
    instance = Instance()
    ctx = Context(instance, devices=[instance.create_device("local-sync")],
                  modules=[load_module_bytes(serialize(_image(body, cconv, nreg, params)))])
    return ctx.lookup("m.f").invoke_views(list(args))


def _binary(op: str, dtype: str, a: Any, b: Any, result: str | None = None,
            attr: Any = None) -> Any:
    (out,) = _call([Arith(2, op, result or dtype, (0, 1), dtype, attr), Return((2,))],
                   "0rr_r", 3, (0, 1), a, b)
    return out


@pytest.mark.parametrize("dtype", ["i8", "i16", "i32", "i64", "index"])
def test_integer_ops_wrap_at_their_width(dtype: str) -> None:
    np_type = np.dtype("int64" if dtype == "index" else "int" + dtype[1:]).type
    info = np.iinfo(np_type)
    big, small = int(info.max), int(info.min)
    with np.errstate(over="ignore"):
        assert _binary("addi", dtype, big, 1) == small
        assert _binary("subi", dtype, small, 1) == big
        assert _binary("muli", dtype, big, 3) == int(np_type(big) * np_type(3))
    assert _binary("divsi", dtype, -7, 2) == -3  # truncates toward zero
    assert _binary("remsi", dtype, -7, 2) == -1
    assert _binary("divui", dtype, -1, 2) == big  # all ones, unsigned, halved
    assert _binary("shrui", dtype, -1, info.bits - 1) == 1
    assert _binary("shrsi", dtype, -8, 1) == -4
    assert _binary("maxui", dtype, -1, 5) == -1
    assert _binary("minsi", dtype, -1, 5) == -1
    assert _binary("cmpi", dtype, -1, 1, "i1", "ult") is False
    assert _binary("cmpi", dtype, -1, 1, "i1", "slt") is True


def test_i1_is_a_bool_and_adds_modulo_two() -> None:
    assert _binary("addi", "i1", True, True) is False
    assert _binary("xori", "i1", True, False) is True


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "f64"])
def test_float_ops_round_to_their_type(dtype: str) -> None:
    np_type = ml_dtypes.bfloat16 if dtype == "bf16" else np.dtype(
        {"f16": np.float16, "f32": np.float32, "f64": np.float64}[dtype]).type
    a, b = float(np_type(0.1)), float(np_type(0.7))
    assert _binary("addf", dtype, a, b) == float(np_type(np.float32(a) + np.float32(b))
                                                  if dtype != "f64" else a + b)
    assert _binary("divf", dtype, 1.0, 0.0) == float("inf")
    assert _binary("cmpf", dtype, float("nan"), 1.0, "i1", "une") is True
    assert _binary("cmpf", dtype, float("nan"), 1.0, "i1", "one") is False


def test_casts_select_and_math() -> None:
    def unary(op: str, src: str, dst: str, value: Any) -> Any:
        (out,) = _call([Arith(1, op, dst, (0,), src), Return((1,))], "0r_r", 2, (0,), value)
        return out
    assert unary("trunci", "i32", "i8", 300) == 44
    assert unary("extui", "i8", "i32", -1) == 255
    assert unary("extsi", "i1", "i32", True) == -1
    assert unary("uitofp", "i8", "f32", -1) == 255.0
    assert unary("fptosi", "f32", "i16", -2.75) == -2
    assert unary("truncf", "f64", "f16", 0.1) == float(np.float16(0.1))
    assert unary("bitcast", "f32", "i32", 1.0) == 0x3F800000
    assert unary("index_cast", "i16", "index", -5) == -5
    assert unary("sqrt", "f32", "f32", 2.0) == float(np.sqrt(np.float32(2.0)))
    (out,) = _call([Arith(3, "select", "i8", (0, 1, 2), "i8"), Return((3,))], "0rrr_r", 4,
                   (0, 1, 2), False, 1, 2)
    assert out == 2


def test_integer_division_by_zero_is_a_fault() -> None:
    with pytest.raises(RuntimeFault, match="arith.divsi: i32 division by zero"):
        _binary("divsi", "i32", 1, 0)
    with pytest.raises(RuntimeFault, match="arith.ceildivui: i8 division by zero"):
        _binary("ceildivui", "i8", 1, 0)


def test_floor_and_ceil_divisions_round_their_way() -> None:
    assert [_binary("floordivsi", "i32", a, b) for a, b in [(-7, 2), (7, -2), (7, 2), (-8, 2)]] \
        == [-4, -4, 3, -4]
    assert [_binary("ceildivsi", "i32", a, b) for a, b in [(-7, 2), (7, -2), (7, 2), (-7, -2)]] \
        == [-3, -3, 4, 4]
    assert _binary("ceildivui", "i8", -1, 2) == -128  # 255 / 2 rounds up to 128, read signed
    assert _binary("floordivsi", "i8", -128, -1) == -128  # MIN / -1 wraps to MIN
    assert _binary("ceildivsi", "i64", -(2**63), -1) == -(2**63)


def test_edges_mlir_leaves_undefined_have_one_result() -> None:
    """The results weir/format/kernel_description.py defines (MLIR: poison)."""
    assert _binary("shli", "i8", 1, 8) == 0  # shifts past the width
    assert _binary("shrsi", "i8", -8, -56) == -1  # an amount of 200, read unsigned
    assert _binary("shrui", "i32", -1, -1) == 0
    assert _binary("shrsi", "i16", 8, 16) == 0

    def unary(op: str, src: str, dst: str, value: Any) -> Any:
        (out,) = _call([Arith(1, op, dst, (0,), src), Return((1,))], "0r_r", 2, (0,), value)
        return out
    assert unary("fptosi", "f32", "i8", 1e10) == 127  # saturates
    assert unary("fptosi", "f64", "i64", -1e300) == -(2**63)
    assert unary("fptoui", "f32", "i8", -3.5) == 0
    assert unary("fptoui", "f32", "i8", 300.0) == -1  # 255, read signed
    assert unary("fptosi", "f32", "i32", float("nan")) == 0
    assert unary("index_castui", "i8", "index", -1) == 255
    assert unary("index_castui", "index", "i16", -1) == -1


def test_min_max_order_zeros_and_treat_nan_by_kind() -> None:
    nan = float("nan")
    assert str(_binary("maximumf", "f32", -0.0, 0.0)) == "0.0"
    assert str(_binary("maximumf", "f32", 0.0, -0.0)) == "0.0"
    assert str(_binary("minimumf", "f16", 0.0, -0.0)) == "-0.0"
    assert str(_binary("maxnumf", "bf16", 0.0, -0.0)) == "0.0"
    assert str(_binary("minnumf", "f64", -0.0, 0.0)) == "-0.0"
    assert np.isnan(_binary("maximumf", "f32", nan, 1.0))
    assert np.isnan(_binary("minimumf", "f32", 1.0, nan))
    assert _binary("maxnumf", "f32", nan, 1.0) == 1.0
    assert _binary("minnumf", "f32", 2.0, nan) == 2.0


def _bad(ins: Arith, message: str) -> None:
    """Rejected when written, and when a file a producer wrote without verifying is loaded."""
    reject(_image([Const(0, 1), Const(1, 2), ins, Return((2,))], "0_r", 3, ()), message)


@pytest.mark.parametrize("ins, message", [
    (Arith(2, "pow2", "f32", (0, 1), "f32"), "unknown arith op 'pow2'"),
    (Arith(2, "index", "index", (), "index"), "unknown arith op 'index'"),
    (Arith(2, "addi", "i7", (0, 1), "i7"), "unknown type 'i7'"),
    (Arith(2, "addi", "i32", (0,), "i32"), "'addi' takes 2 operand"),
    (Arith(2, "addi", "i32", (0, 5), "i32"), "register 5 out of range"),
    (Arith(2, "addf", "i32", (0, 1), "i32"), "'addf' cannot take i32 to i32"),
    (Arith(2, "addi", "i64", (0, 1), "i32"), "'addi' cannot take i32 to i64"),
    (Arith(2, "cmpi", "i1", (0, 1), "i32", "less"), "unknown predicate 'less'"),
    (Arith(2, "cmpf", "i1", (0, 1), "i32", "olt"), "'cmpf' cannot take i32 to i1"),
    (Arith(2, "addi", "i32", (0, 1), "i32", "eq"), "'addi' takes no attribute"),
    (Arith(2, "sitofp", "i32", (0,), "f32"), "'sitofp' cannot take f32 to i32"),
    (Arith(2, "bitcast", "f32", (0,), "i64"), "'bitcast' cannot take i64 to f32"),
    (Arith(2, "floordivsi", "f32", (0, 1), "f32"), "'floordivsi' cannot take f32 to f32"),
    (Arith(2, "index_castui", "f32", (0,), "i32"), "'index_castui' cannot take i32 to f32"),
    (Arith(2, "mulsi_extended", "i32", (0, 1), "i32"), "unknown arith op 'mulsi_extended'"),
])
def test_malformed_arith_instructions_are_rejected(ins: Arith, message: str) -> None:
    _bad(ins, message)


def test_malformed_arith_json_is_a_module_format_error() -> None:
    from weir.format.module_json import instruction_from_json
    for value, message in [
        (["arith", 0, "addi", "i32", [1, 2], "i32"], "takes 6 field"),
        (["arith", 0, "addi", "i32", 3, "i32", None], "expected a list"),
        (["arith", 0, 7, "i32", [1, 2], "i32", None], "expected a string"),
    ]:
        with pytest.raises(ModuleFormatError, match=message):
            instruction_from_json(value, "f")


def test_arith_round_trips_through_the_module_file() -> None:
    image = _image([Arith(2, "cmpf", "i1", (0, 1), "bf16", "uge"), Return((2,))], "0ff_i", 3,
                   (0, 1))
    assert deserialize(serialize(image)).functions[0] == image.functions[0]


def test_buffer_load_reads_one_element() -> None:
    hal = HalModule()
    buf = Allocator().allocate_copy(np.array([1.5, -2.25], np.float32))
    assert hal.buffer_load(None, buf, 4, "f32") == -2.25  # type: ignore[arg-type]
    with pytest.raises(RuntimeFault, match="outside the buffer of 8 bytes"):
        hal.buffer_load(None, buf, 8, "f32")  # type: ignore[arg-type]


@pytest.mark.parametrize("dtype, constant, expected", [
    ("f32", 0x40200000, 2.5),                       # a float's bits in the low 32 bits
    ("f16", 0x3C00, 1.0),
    ("bf16", 0x4020, 2.5),
    ("f64", int(np.float64(-0.5).view(np.int64)), -0.5),
    ("i8", -1, -1),                                  # sign-extended on the host, truncated here
    ("i8", 0x1FF, -1),
    ("i1", -1, True),
    ("index", -3, -3),
])
def test_push_op_reads_a_typed_scalar(dtype: str, constant: int, expected: Any) -> None:
    np_dtype = {"f32": "float32", "f16": "float16", "f64": "float64", "i8": "int8",
                "i1": "bool", "index": "int64"}.get(dtype, ml_dtypes.bfloat16)
    ops = [Empty(dtype, (3,)),
           Generic((), (0,), ((0,),), ("parallel",), (ScalarOp("push", (), dtype, 0),), (1,)),
           Store(1, 0)]
    (out,) = run_kernel(ops, [], [((3,), np_dtype)], constants=(constant,))  # type: ignore[list-item]
    np.testing.assert_array_equal(out, np.full(3, expected, dtype=np_dtype))


def test_push_op_index_is_checked_by_the_codec() -> None:
    entry = EntryPoint("k", 1, 1, (
        Empty("f32", (3,)),
        Generic((), (0,), ((0,),), ("parallel",), (ScalarOp("push", (), "f32", 1),), (1,)),
        Store(1, 0)))
    with pytest.raises(ModuleFormatError, match=r"attr: 1 is out of range \(must be < 1\)"):
        decode_reference_executable(encode_reference_executable(ReferenceExecutable((entry,))))


def test_arith_module_verifies_like_any_other() -> None:
    # The hand-built mul module still verifies with the new instruction set in place.
    assert deserialize(serialize(mul_module())).name == "module"
