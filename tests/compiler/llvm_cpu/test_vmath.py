"""The llvm-cpu target's inline math functions against numpy: error in ulp over dense sweeps and
random bit patterns, the IEEE/C99 special values, that the loops around them vectorise with no
libm call left for f32, that vector operands give the same bits as the vectorised loop, the
f32 accuracy again in a build for a CPU without FMA, and that AVX-512's ldexp instruction gives
the same bits as the portable scaling it replaces there."""

from __future__ import annotations

import ctypes
import math
import re
from fractions import Fraction
from functools import cache

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

import weir.api as weir
from weir.compiler.targets.llvm_cpu import vmath
from weir.compiler.targets.llvm_cpu.machine import host_features, resolve_cpu
from weir.compiler.targets.llvm_cpu.target import Jit
from weir.compiler.targets.llvm_cpu.vmath import MATH_FUNCTIONS, emit_math

ARITY = {"pow": 2, "atan2": 2, "fma": 3}
NAMES = sorted(MATH_FUNCTIONS)
DTYPE = {32: np.float32, 64: np.float64}
# Reference precision: f32 results are checked against float64, f64 ones against the C long
# double functions numpy exposes (80-bit on x86).
REFERENCE = {32: np.float64, 64: np.longdouble}
VECTOR_LANES = 8
# Worst error allowed, in ulp of the exact result. f64 sin/cos carry their reduced argument in
# one double, which costs up to ~2.4 ulp (5e-16 relative).
TOLERANCE = {32: 2.0, 64: 3.0}
# f64 tan is a quotient of sin and cos, each within ~1.2 ulp (vmath_derived.py).
F64_TOLERANCE = {"tan": 4.0}
EXACT = {"absf", "floor", "ceil", "round", "roundeven", "sqrt", "fma"}
# Interesting ranges swept densely, on top of random bit patterns over all finite values.
SWEEPS: dict[str, list[tuple[float, float]]] = {
    "exp": [(-110, 90), (-750, 712)], "exp2": [(-155, 130), (-1080, 1030)],
    "expm1": [(-30, 90), (-1, 1), (-1e-3, 1e-3), (-40, 712)],
    "log": [(0, 4), (0.5, 2)], "log2": [(0, 4), (0.5, 2)], "log10": [(0, 4), (0.5, 2)],
    "log1p": [(-1, 4), (-0.5, 0.5), (-1e-3, 1e-3)], "tanh": [(-10, 10), (-1, 1), (-25, 25)],
    "erf": [(-5, 5), (-1.5, 1.5), (-7, 7)],
    "sin": [(-10, 10), (-1e4, 1e4), (-1e6, 1e6)], "cos": [(-10, 10), (-1e4, 1e4), (-1e6, 1e6)],
    "atan": [(-5, 5), (-100, 100)], "sqrt": [(0, 100)], "rsqrt": [(0, 100)],
    "absf": [(-2, 2)], "floor": [(-100, 100)], "ceil": [(-100, 100)], "round": [(-100, 100)],
    "roundeven": [(-100, 100)],
    "asin": [(-1, 1), (-1e-3, 1e-3), (0.999, 1)], "acos": [(-1, 1), (0.999, 1), (-1, -0.999)],
    "atanh": [(-1, 1), (-1e-3, 1e-3), (0.999, 1)], "asinh": [(-10, 10), (-1e-3, 1e-3)],
    "acosh": [(1, 10), (1, 1.001), (1e8, 1e10)], "cosh": [(-10, 10), (-90, 90), (-712, 712)],
    "sinh": [(-10, 10), (-1e-3, 1e-3), (-90, 90), (-712, 712)],
    "tan": [(-10, 10), (-1e4, 1e4), (1.5, 1.65)], "cbrt": [(-10, 10), (-1e-3, 1e-3)],
}
# Random bit patterns are limited to where the function is documented accurate: sin and cos
# reduce exactly below 2**20 * pi/2 on any CPU (further with FMA, tested separately).
MAGNITUDE_LIMIT = {"sin": 1.6e6, "cos": 1.6e6, "tan": 1.6e6}
SAMPLES = 300_000


def _round_half_away(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)
    return np.copysign(np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t), x)


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once: in long double for f32 operands (the product is exact there),
    with exact rationals for f64 ones."""
    if a.dtype == np.float64:
        return a.astype(np.longdouble) * b + c
    exact = np.frompyfunc(lambda x, y, z: float(Fraction(float(x)) * Fraction(float(y)) +
                                                Fraction(float(z))), 3, 1)
    return exact(a, b, c).astype(np.float64)


_erf = np.frompyfunc(math.erf, 1, 1)
REFERENCES = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "tanh": np.tanh,
    "erf": lambda x: _erf(x.astype(np.float64)).astype(x.dtype),
    "sin": np.sin, "cos": np.cos, "atan": np.arctan, "atan2": np.arctan2, "pow": np.power,
    "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "absf": np.abs, "floor": np.floor,
    "ceil": np.ceil, "round": _round_half_away, "roundeven": np.rint,
    "fma": _fma,
    "asin": np.arcsin, "acos": np.arccos, "atanh": np.arctanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "cosh": np.cosh, "sinh": np.sinh, "tan": np.tan, "cbrt": np.cbrt,
}


class Compiled:
    """Every function as `void NAME_BITS(T *in..., T *out, i64 n)`, a loop of scalar
    emit_math that LLVM vectorises, and `vec_NAME_BITS`, one call on VECTOR_LANES-wide vector
    operands; compiled for `cpu_name` with the O3 pipeline. `native_ldexp` as the compiler sets
    it for that CPU unless given."""

    def __init__(self, bits: int, cpu_name: str = "host", native_ldexp: bool | None = None):
        cpu = resolve_cpu(cpu_name)
        module = ir.Module(f"vmath_{bits}_{cpu_name}")
        module.triple = cpu.triple
        self.bits = bits
        self.native_ldexp = cpu.native_ldexp if native_ldexp is None else native_ldexp
        scalar = ir.FloatType() if bits == 32 else ir.DoubleType()
        for name in NAMES:
            self._loop(module, name, scalar)
            self._vector(module, name, ir.VectorType(scalar, VECTOR_LANES))
        self.jit = Jit(module, cpu)
        self.optimized_ir = self.jit.optimized_ir

    def _loop(self, module: ir.Module, name: str, scalar: ir.Type) -> None:
        i64 = ir.IntType(64)
        n_in = ARITY.get(name, 1)
        fn = ir.Function(module, ir.FunctionType(
            ir.VoidType(), [scalar.as_pointer()] * (n_in + 1) + [i64]), f"{name}_{self.bits}")
        for arg in fn.args[:-1]:
            arg.add_attribute("noalias")
        entry, body, done = (fn.append_basic_block(n) for n in ("entry", "body", "done"))
        b = ir.IRBuilder(entry)
        count = fn.args[-1]
        b.cbranch(b.icmp_signed(">", count, ir.Constant(i64, 0)), body, done)
        b.position_at_end(body)
        index = b.phi(i64)
        index.add_incoming(ir.Constant(i64, 0), entry)
        operands = [b.load(b.gep(fn.args[k], [index])) for k in range(n_in)]
        b.store(emit_math(b, name, operands, self.native_ldexp), b.gep(fn.args[n_in], [index]))
        following = b.add(index, ir.Constant(i64, 1))
        index.add_incoming(following, body)
        b.cbranch(b.icmp_signed("<", following, count), body, done)
        b.position_at_end(done)
        b.ret_void()

    def _vector(self, module: ir.Module, name: str, vector: ir.VectorType) -> None:
        n_in = ARITY.get(name, 1)
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [vector.as_pointer()] * (n_in + 1)),
                         f"vec_{name}_{self.bits}")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        align = self.bits // 8  # numpy arrays are only element-aligned
        operands = [b.load(fn.args[k], align=align) for k in range(n_in)]
        b.store(emit_math(b, name, operands, self.native_ldexp), fn.args[n_in], align=align)
        b.ret_void()

    def __call__(self, name: str, *operands: np.ndarray) -> np.ndarray:
        arrays = [np.ascontiguousarray(x, DTYPE[self.bits]) for x in operands]
        out = np.empty_like(arrays[0])
        proto = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (len(arrays) + 1), ctypes.c_int64)
        proto(self.jit.address(f"{name}_{self.bits}"))(
            *[a.ctypes.data for a in arrays], out.ctypes.data, out.size)
        return out

    def vector(self, name: str, *operands: np.ndarray) -> np.ndarray:
        arrays = [np.ascontiguousarray(x, DTYPE[self.bits]) for x in operands]
        out = np.empty_like(arrays[0])
        proto = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (len(arrays) + 1))
        fn = proto(self.jit.address(f"vec_{name}_{self.bits}"))
        for start in range(0, out.size, VECTOR_LANES):
            fn(*[a[start:].ctypes.data for a in arrays], out[start:].ctypes.data)
        return out


@cache
def compiled(bits: int, cpu_name: str = "host", native_ldexp: bool | None = None) -> Compiled:
    return Compiled(bits, cpu_name, native_ldexp)


def ulp_error(got: np.ndarray, exact: np.ndarray, bits: int) -> np.ndarray:
    """|got - exact| in units of the spacing of the target type in exact's binade; 0 where got
    is the correctly rounded value (including inf for overflow and a NaN for a NaN)."""
    dtype = DTYPE[bits]
    with np.errstate(all="ignore"):
        rounded = exact.astype(dtype)
        toward_zero = np.where(np.abs(rounded.astype(exact.dtype)) > np.abs(exact),
                               np.nextafter(rounded, dtype(0)), rounded)
        spacing = np.spacing(np.abs(toward_zero)).astype(exact.dtype)
        error = np.abs(got.astype(exact.dtype) - exact) / spacing
    matches = (got == rounded) | (np.isnan(got) & np.isnan(exact))
    return np.where(matches, 0.0, np.where(np.isnan(error), np.inf, error)).astype(np.float64)


def random_values(rng: np.random.Generator, bits: int, count: int,
                  limit: float | None = None) -> np.ndarray:
    """Finite values spread over every binade, either sign."""
    if bits == 32:
        values = rng.integers(0, 2**32, count, dtype=np.uint64).astype(np.uint32).view(
            np.float32)
    else:
        values = rng.integers(0, 2**64, count, dtype=np.uint64).view(np.float64)
    values = values[np.isfinite(values)]
    return values if limit is None else values[np.abs(values) < limit]


def inputs(name: str, bits: int, rng: np.random.Generator) -> list[np.ndarray]:
    dtype = DTYPE[bits]
    if name in ("pow", "atan2"):
        x = [random_values(rng, bits, SAMPLES), rng.uniform(0, 10, SAMPLES),
             rng.uniform(-10, 10, SAMPLES)]
        y = [random_values(rng, bits, SAMPLES), rng.uniform(-40, 40, SAMPLES),
             rng.integers(-40, 40, SAMPLES) if name == "pow" else rng.uniform(-10, 10, SAMPLES)]
        size = min(len(x[0]), len(y[0]))
        x[0], y[0] = x[0][:size], y[0][:size]
        return [np.concatenate(x).astype(dtype), np.concatenate(y).astype(dtype)]
    if name == "fma":
        return [rng.uniform(-100, 100, SAMPLES).astype(dtype) for _ in range(3)]
    parts = [random_values(rng, bits, SAMPLES, MAGNITUDE_LIMIT.get(name))]
    parts += [np.linspace(lo, hi, SAMPLES).astype(dtype) for lo, hi in SWEEPS.get(name, [])]
    return [np.concatenate(parts)]


def max_error(code: Compiled, name: str, operands: list[np.ndarray]) -> tuple[float, str]:
    bits = code.bits
    got = code(name, *operands)
    with np.errstate(all="ignore"):
        exact = REFERENCES[name](*[x.astype(REFERENCE[bits]) for x in operands])
    errors = ulp_error(got, np.asarray(exact, REFERENCE[bits]), bits)
    worst = int(np.argmax(errors))
    where = ", ".join(repr(x[worst]) for x in operands)
    return float(errors[worst]), f"{name}({where}) = {got[worst]!r}, exact {exact[worst]!r}"


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("name", NAMES)
def test_accuracy(name: str, bits: int) -> None:
    error, worst = max_error(compiled(bits), name, inputs(name, bits, np.random.default_rng(1)))
    allowed = 0.5 if name in EXACT else F64_TOLERANCE.get(name, 3.0) if bits == 64 else \
        TOLERANCE[bits]
    assert error <= allowed, f"{error:.3f} ulp at {worst}"


@pytest.mark.skipif("fma" not in host_features(), reason="needs a host with FMA")
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sincos_far_range_with_fma(name: str) -> None:
    """With FMA the f64 reduction stays exact for f32 arguments up to ~3e10."""
    rng = np.random.default_rng(2)
    operands = [np.concatenate([random_values(rng, 32, SAMPLES, 3e10),
                                rng.uniform(-3e10, 3e10, SAMPLES)]).astype(np.float32)]
    error, worst = max_error(compiled(32), name, operands)
    assert error <= TOLERANCE[32], f"{error:.3f} ulp at {worst}"


@pytest.mark.parametrize("name", ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
                                  "tanh", "erf", "sin", "cos", "atan", "atan2", "pow"])
def test_f32_accuracy_without_fma(name: str) -> None:
    """x86-64-v2 has no FMA: llvm.fmuladd becomes a multiply and an add, and the split
    constants must keep the reductions exact on their own."""
    error, worst = max_error(compiled(32, "x86-64-v2"), name,
                             inputs(name, 32, np.random.default_rng(3)))
    assert error <= TOLERANCE[32], f"{error:.3f} ulp at {worst}"


INF, NAN = math.inf, math.nan
# (function, operands, expected) for both precisions, then the range limits of each.
SPECIALS: list[tuple[str, tuple[float, ...], float]] = [
    ("exp", (INF,), INF), ("exp", (-INF,), 0.0), ("exp", (NAN,), NAN), ("exp", (-0.0,), 1.0),
    ("exp2", (NAN,), NAN), ("exp2", (-INF,), 0.0), ("exp2", (INF,), INF),
    ("expm1", (-0.0,), -0.0), ("expm1", (INF,), INF), ("expm1", (-INF,), -1.0),
    ("expm1", (NAN,), NAN),
    ("log", (0.0,), -INF), ("log", (-0.0,), -INF), ("log", (-1.0,), NAN), ("log", (INF,), INF),
    ("log", (-INF,), NAN), ("log", (NAN,), NAN), ("log", (1.0,), 0.0),
    ("log2", (0.0,), -INF), ("log2", (8.0,), 3.0), ("log2", (2.0**-149,), -149.0),
    ("log2", (-2.0,), NAN), ("log2", (INF,), INF), ("log10", (0.0,), -INF),
    ("log10", (-3.0,), NAN), ("log10", (INF,), INF), ("log10", (1.0,), 0.0),
    ("log1p", (-0.0,), -0.0), ("log1p", (-1.0,), -INF), ("log1p", (-2.0,), NAN),
    ("log1p", (INF,), INF), ("log1p", (NAN,), NAN), ("log1p", (1e-30,), 1e-30),
    ("tanh", (-0.0,), -0.0), ("tanh", (INF,), 1.0), ("tanh", (-INF,), -1.0),
    ("tanh", (NAN,), NAN), ("tanh", (30.0,), 1.0), ("tanh", (-1e-30,), -1e-30),
    ("erf", (-0.0,), -0.0), ("erf", (INF,), 1.0), ("erf", (-INF,), -1.0), ("erf", (NAN,), NAN),
    ("erf", (10.0,), 1.0),
    ("sin", (-0.0,), -0.0), ("sin", (INF,), NAN), ("sin", (-INF,), NAN), ("sin", (NAN,), NAN),
    ("sin", (1e-30,), 1e-30), ("cos", (0.0,), 1.0), ("cos", (INF,), NAN), ("cos", (NAN,), NAN),
    ("atan", (-0.0,), -0.0), ("atan", (INF,), math.pi / 2), ("atan", (-INF,), -math.pi / 2),
    ("atan", (NAN,), NAN),
    ("sqrt", (-1.0,), NAN), ("sqrt", (-0.0,), -0.0), ("sqrt", (INF,), INF),
    ("rsqrt", (0.0,), INF), ("rsqrt", (INF,), 0.0), ("rsqrt", (-1.0,), NAN),
    ("absf", (-0.0,), 0.0), ("floor", (-0.5,), -1.0), ("ceil", (-0.5,), -0.0),
    ("round", (2.5,), 3.0), ("round", (-2.5,), -3.0), ("round", (0.49999997,), 0.0),
    ("roundeven", (2.5,), 2.0), ("roundeven", (-0.5,), -0.0),
    ("fma", (2.0, 3.0, 1.0), 7.0), ("fma", (INF, 0.0, 1.0), NAN),
]
RANGE_LIMITS: dict[int, list[tuple[str, tuple[float, ...], float]]] = {
    32: [("exp", (88.8,), INF), ("exp2", (128.0,), INF), ("exp2", (-149.0,), 2.0**-149),
         ("exp2", (-150.0,), 0.0), ("expm1", (88.8,), INF), ("exp", (-104.0,), 0.0)],
    64: [("exp", (709.8,), INF), ("exp2", (1024.0,), INF), ("exp2", (-1074.0,), 2.0**-1074),
         ("exp2", (-1075.0,), 0.0), ("expm1", (709.8,), INF), ("exp", (-746.0,), 0.0)],
}


def same(got: float, expected: float) -> bool:
    """Equal including the sign of zero, or both NaN."""
    if math.isnan(expected):
        return math.isnan(got)
    return got == expected and math.copysign(1, got) == math.copysign(1, expected)


@pytest.mark.parametrize("bits,name,operands,expected",
                         [(bits, *case) for bits in (32, 64)
                          for case in SPECIALS + RANGE_LIMITS[bits]])
def test_special_values(bits: int, name: str, operands: tuple[float, ...],
                        expected: float) -> None:
    dtype = DTYPE[bits]
    got = compiled(bits)(name, *[np.array([x], dtype) for x in operands])[0]
    assert same(float(got), float(dtype(expected))), f"{name}{operands} = {got!r}"


EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, INF, -INF, NAN, 1e-40,
         -1e-40, 1e30, -1e30]


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("name", ["pow", "atan2"])
def test_two_operand_special_values(name: str, bits: int) -> None:
    """Every pair of zeros, ones, halves, integers, infinities and NaN against numpy, which
    follows C99 here (signs of zero and infinity included)."""
    dtype = DTYPE[bits]
    x, y = (np.array(v, dtype) for v in zip(*[(a, b) for a in EDGES for b in EDGES]))
    got = compiled(bits)(name, x, y)
    with np.errstate(all="ignore"):
        exact = REFERENCES[name](x.astype(np.float64), y.astype(np.float64)).astype(dtype)
    for a, b, g, e in zip(x, y, got, exact):
        close = same(float(g), float(e)) or (math.isfinite(e) and e != 0 and
                                             abs(g - e) <= np.spacing(abs(e)))
        assert close, f"{name}({a!r}, {b!r}) = {g!r}, expected {e!r}"


def test_denormals() -> None:
    """exp underflows gradually instead of flushing, and log takes denormal arguments."""
    code = compiled(32)
    got = code("exp", np.array([-100.0, -103.0], np.float32))
    exact = np.exp(np.array([-100.0, -103.0])).astype(np.float32)
    assert np.all(got > 0) and np.array_equal(got, exact)
    tiny = np.array([1e-40, 2.0**-149], np.float32)
    assert np.array_equal(code("log", tiny), np.log(tiny.astype(np.float64)).astype(np.float32))


def _function_body(text: str, name: str) -> str:
    match = re.search(rf"define [^\n]*@{re.escape(name)}\(.*?\n}}", text, re.S)
    assert match, name
    return match.group(0)


@pytest.mark.parametrize("name", NAMES)
def test_f32_loops_vectorise_without_calls(name: str) -> None:
    body = _function_body(compiled(32).optimized_ir, f"{name}_32")
    # 8 or 16 lanes on AVX machines, 4 with SSE only
    assert re.search(r"<(4|8|16) x float>", body), f"{name}: loop not vectorised"
    calls = set(re.findall(r"call [^@]*@([\w.]+)", body))
    assert all(c.startswith("llvm.") for c in calls), f"{name} calls {calls}"


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("name", NAMES)
def test_vector_operands_match_loop(name: str, bits: int) -> None:
    code = compiled(bits)
    rng = np.random.default_rng(4)
    count = 64 * VECTOR_LANES
    operands = [np.concatenate([rng.uniform(-4, 4, count // 2),
                                random_values(rng, bits, count)[:count // 2]]).astype(DTYPE[bits])
                for _ in range(ARITY.get(name, 1))]
    np.testing.assert_array_equal(code.vector(name, *operands), code(name, *operands))


# The functions that scale by 2**k (vmath's `ldexp`), in each precision: exp and its users.
LDEXP_USERS = [(name, bits) for bits in (32, 64)
               for name in ["exp", "exp2", "expm1", "tanh", "cosh", "sinh", "erf", "pow"]
               if bits == 32 or name not in ("erf", "pow")]  # f64 erf and pow call libm
# Where exp's results overflow, become denormal or round to zero, on top of the EDGES.
SCALING_EDGES = [88.72283, 88.72284, 89.0, -87.33654, -87.33655, -103.28, -103.98, -104.0,
                 709.78, 709.79, -708.39, -745.13, -745.14, 128.0, -126.0, -149.0, -150.0,
                 1024.0, -1022.0, -1074.0, -1075.0]


@pytest.mark.skipif("avx512f" not in host_features(), reason="needs a host with AVX-512F")
@pytest.mark.parametrize("name,bits", LDEXP_USERS)
def test_native_ldexp_gives_the_portable_bits(name: str, bits: int) -> None:
    """On AVX-512 the scaling is `llvm.ldexp` (vscalef), which rounds p * 2**k once, as the
    portable two factors do (the first is exact): the same bits, overflow, denormals and NaN
    included."""
    native, portable = compiled(bits), compiled(bits, native_ldexp=False)
    assert "@llvm.ldexp" in _function_body(native.optimized_ir, f"{name}_{bits}")
    assert "@llvm.ldexp" not in _function_body(portable.optimized_ir, f"{name}_{bits}")
    edges = np.array(EDGES + SCALING_EDGES + [-x for x in SCALING_EDGES], DTYPE[bits])
    operands = [np.concatenate([x, edges]) for x in inputs(name, bits, np.random.default_rng(5))]
    got, want = native(name, *operands), portable(name, *operands)
    as_int = np.uint32 if bits == 32 else np.uint64
    differ = np.flatnonzero(got.view(as_int) != want.view(as_int))
    assert differ.size == 0, (f"{differ.size} differ, first {name}({operands[0][differ[0]]!r}) "
                              f"= {got[differ[0]]!r}, portable {want[differ[0]]!r}")


@pytest.mark.parametrize("cpu_name,native", [("x86-64-v4", True), ("x86-64-v3", False)])
def test_compiler_uses_native_ldexp_only_with_avx512(cpu_name: str, native: bool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The llvm-cpu target asks for the ldexp instruction exactly where the CPU has it (compiling
    needs no such CPU here: nothing runs)."""
    seen: list[bool] = []
    portable_ldexp = vmath._Emitter.ldexp

    def ldexp(e: vmath._Emitter, p: ir.Value, k: ir.Value) -> ir.Value:
        seen.append(e.native_ldexp)
        return portable_ldexp(e, p, k)
    monkeypatch.setattr(vmath._Emitter, "ldexp", ldexp)
    src = """
    func.func @f(%a: tensor<64xf32>) -> tensor<64xf32> {
      %0 = math.exp %a : tensor<64xf32>
      return %0 : tensor<64xf32>
    }"""
    weir.compile_string(src, "exp.mlir", weir.CompilerOptions(target_backends=("llvm-cpu",),
                                                              llvmcpu_target_cpu=cpu_name))
    assert seen and all(s == native for s in seen)


def test_rejects_misuse() -> None:
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.FloatType(), ir.IntType(32)]),
                     "f")
    b = ir.IRBuilder(fn.append_basic_block())
    with pytest.raises(ValueError, match="unknown function"):
        emit_math(b, "sigmoid", [fn.args[0]])
    with pytest.raises(ValueError, match="takes 2 operands"):
        emit_math(b, "pow", [fn.args[0]])
    with pytest.raises(ValueError, match="f32/f64"):
        emit_math(b, "exp", [fn.args[1]])
