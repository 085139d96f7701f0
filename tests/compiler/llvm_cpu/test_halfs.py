"""f16 <-> f32 by integer operations: every f16 value converts exactly, and f32 values (specials,
subnormal halves, ties, overflow) round to nearest even exactly as numpy does. This is how f16
works on CPUs without F16C, where LLVM would call routines the process may not have."""

from __future__ import annotations

import ctypes

import llvmlite.ir as ir
import numpy as np

from weir.compiler.targets.llvm_cpu.halfs import float_to_half, half_to_float
from weir.compiler.targets.llvm_cpu.machine import resolve_cpu
from weir.compiler.targets.llvm_cpu.target import Jit

I16, I64, F32 = ir.IntType(16), ir.IntType(64), ir.FloatType()
_LOOP = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)


def _map(name: str, src: ir.Type, dst: ir.Type, convert, module: ir.Module) -> None:  # type: ignore[no-untyped-def]
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [src.as_pointer(), dst.as_pointer(),
                                                             I64]), name)
    entry, body, done = (fn.append_basic_block(n) for n in ("entry", "body", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", fn.args[2], I64(0)), body, done)
    b.position_at_end(body)
    i = b.phi(I64)
    i.add_incoming(I64(0), entry)
    b.store(convert(b, b.load(b.gep(fn.args[0], [i]))), b.gep(fn.args[1], [i]))
    nxt = b.add(i, I64(1))
    i.add_incoming(nxt, body)
    b.cbranch(b.icmp_signed("<", nxt, fn.args[2]), body, done)
    b.position_at_end(done)
    b.ret_void()


def _compiled(cpu_name: str) -> tuple[Jit, ctypes._CFuncPtr, ctypes._CFuncPtr]:
    cpu = resolve_cpu(cpu_name)
    module = ir.Module("halfs")
    module.triple = cpu.triple
    _map("widen", I16, F32, half_to_float, module)
    _map("narrow", F32, I16, float_to_half, module)
    jit = Jit(module, cpu)
    return jit, _LOOP(jit.address("widen")), _LOOP(jit.address("narrow"))


def test_every_f16_widens_exactly_and_f32_narrows_like_numpy() -> None:
    for cpu in ("x86-64", "host"):
        jit, widen, narrow = _compiled(cpu)
        bits = np.arange(1 << 16, dtype=np.uint16)
        wide = np.empty(bits.size, np.float32)
        widen(bits.ctypes.data, wide.ctypes.data, bits.size)
        expected = bits.view(np.float16).astype(np.float32)
        nan = np.isnan(expected)
        np.testing.assert_array_equal(np.isnan(wide), nan)
        np.testing.assert_array_equal(wide.view(np.uint32)[~nan], expected.view(np.uint32)[~nan])

        rng = np.random.default_rng(3)
        samples = np.concatenate([
            rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32).view(np.float32),
            expected[~nan],  # exact halves
            (expected[~nan].astype(np.float64) * (1 + 2.0 ** -11)).astype(np.float32),  # ties
            np.array([0.0, -0.0, np.inf, -np.inf, 65504, 65519.996, 65520, 1e-8, -6e-8,
                      2.0 ** -25, 2.0 ** -24, 3 * 2.0 ** -26], np.float32)])
        narrowed = np.empty(samples.size, np.uint16)
        narrow(samples.ctypes.data, narrowed.ctypes.data, samples.size)
        with np.errstate(over="ignore"):
            want = samples.astype(np.float16)
        finite = ~np.isnan(samples)
        np.testing.assert_array_equal(narrowed[finite], want.view(np.uint16)[finite])
        assert np.isnan(narrowed[~finite].view(np.float16)).all()
        del jit
