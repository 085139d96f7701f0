"""Scratch memory an executable keeps between its calls.

Entries allocate scratch (a padded input's rows, NCHW input converted to NHWC, intermediates no
binding holds) on every call. With malloc and free, a block of more than glibc's mmap threshold
came fresh from the kernel each time and every page of it faulted on first touch: a padded 3 x 3
convolution of 56 x 56 x 64 spent a fifth of its time in the page-fault handler, and ran 27%
slower than the same convolution unpadded. Here each executable keeps a few blocks (`SLOTS`, one
per thread that may run its entries at once, more for entries holding several blocks), each
claimed with one compare-and-swap and grown to the largest size asked of it, so after the first
calls scratch is memory already mapped and warm in the cache. Blocks above `KEEP_BYTES`, and
requests when every slot is taken, still go to malloc and free.

A block starts with a header word, the index of its slot (`SLOTS` for a malloc'd one), so `give`
needs no search and no shared state but the slot's own flag. The loader calls
`SCRATCH_RELEASE_SYMBOL` when it drops the executable (weir/runtime/executables/llvm_cpu.py)."""

from __future__ import annotations

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.loops import I64
from weir.format.native_executable import SCRATCH_RELEASE_SYMBOL

# Blocks kept per executable.
SLOTS = 8
# The largest block kept (header included); larger ones are malloc'd and freed each call.
KEEP_BYTES = 16 << 20

_I8P = ir.IntType(8).as_pointer()
_VOID = ir.VoidType()
_HEADER = 64  # bytes before the memory handed out: keeps malloc's 16-byte alignment (and 64)
_WORDS = 8  # i64 words per slot, one cache line: busy flag, capacity, base address
_TAKE, _GIVE = "weir.scratch.take", "weir.scratch.give"


def scratch_functions(module: ir.Module) -> tuple[ir.Function, ir.Function]:
    """(take, give): `take(bytes) -> i8*` and `give(i8*)`, defined once per module."""
    existing = module.globals.get(_TAKE)
    if isinstance(existing, ir.Function):
        return existing, module.globals[_GIVE]
    slots = ir.GlobalVariable(module, ir.ArrayType(I64, SLOTS * _WORDS), "weir.scratch.slots")
    slots.linkage = "internal"
    slots.initializer = ir.Constant(slots.value_type, None)
    slots.align = 64
    malloc = _declare(module, "malloc", _I8P, [I64])
    free = _declare(module, "free", _VOID, [_I8P])
    take = _take(module, slots, malloc, free)
    give = _give(module, slots, free)
    _release(module, slots, free)
    return take, give


def _declare(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
    existing = module.globals.get(name)
    if isinstance(existing, ir.Function):
        return existing
    return ir.Function(module, ir.FunctionType(ret, args), name)


def _word(b: ir.IRBuilder, slots: ir.GlobalVariable, slot: ir.Value, word: int) -> ir.Value:
    return b.gep(slots, [I64(0), b.add(b.mul(slot, I64(_WORDS)), I64(word))], inbounds=True)


def _stamped(b: ir.IRBuilder, raw: ir.Value, slot: ir.Value) -> ir.Value:
    """The memory handed out from block `raw`, whose header records `slot`."""
    b.store(slot, b.bitcast(raw, I64.as_pointer()), align=8)
    return b.gep(raw, [I64(_HEADER)], inbounds=True)


def _take(module: ir.Module, slots: ir.GlobalVariable, malloc: ir.Function,
          free: ir.Function) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(_I8P, [I64]), _TAKE)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    size, = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    need = b.add(size, I64(_HEADER))
    search, claim, grow, ready, next_slot, fallback = (
        fn.append_basic_block(n) for n in ("search", "claim", "grow", "ready", "next", "malloc"))
    entry = b.block
    b.cbranch(b.icmp_unsigned("<=", need, I64(KEEP_BYTES)), search, fallback)

    b.position_at_end(search)
    slot = b.phi(I64, "slot")
    slot.add_incoming(I64(0), entry)
    won = b.extract_value(b.cmpxchg(_word(b, slots, slot, 0), I64(0), I64(1), "acquire",
                                    "monotonic"), 1)
    b.cbranch(won, claim, next_slot)

    b.position_at_end(next_slot)
    following = b.add(slot, I64(1))
    slot.add_incoming(following, next_slot)
    b.cbranch(b.icmp_unsigned("<", following, I64(SLOTS)), search, fallback)

    b.position_at_end(claim)  # the slot is ours until `give` clears its flag
    capacity = b.load(_word(b, slots, slot, 1))
    b.cbranch(b.icmp_unsigned(">=", capacity, need), ready, grow)

    b.position_at_end(grow)
    base_word = _word(b, slots, slot, 2)
    b.call(free, [b.inttoptr(b.load(base_word), _I8P)])
    fresh = b.call(malloc, [need])
    got = b.icmp_unsigned("!=", fresh, ir.Constant(_I8P, None))
    b.store(b.ptrtoint(fresh, I64), base_word)
    b.store(b.select(got, need, I64(0)), _word(b, slots, slot, 1))
    with b.if_then(b.not_(got), likely=False):
        b.store_atomic(I64(0), _word(b, slots, slot, 0), "release", 8)
        b.ret(ir.Constant(_I8P, None))
    b.branch(ready)

    b.position_at_end(ready)
    b.ret(_stamped(b, b.inttoptr(b.load(_word(b, slots, slot, 2)), _I8P), slot))

    b.position_at_end(fallback)
    raw = b.call(malloc, [need])
    with b.if_then(b.icmp_unsigned("==", raw, ir.Constant(_I8P, None)), likely=False):
        b.ret(raw)
    b.ret(_stamped(b, raw, I64(SLOTS)))
    return fn


def _give(module: ir.Module, slots: ir.GlobalVariable, free: ir.Function) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(_VOID, [_I8P]), _GIVE)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    memory, = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    with b.if_then(b.icmp_unsigned("==", memory, ir.Constant(_I8P, None)), likely=False):
        b.ret_void()
    raw = b.gep(memory, [I64(-_HEADER)], inbounds=True)
    slot = b.load(b.bitcast(raw, I64.as_pointer()), align=8)
    with b.if_else(b.icmp_unsigned("<", slot, I64(SLOTS))) as (kept, allocated):
        with kept:
            b.store_atomic(I64(0), _word(b, slots, slot, 0), "release", 8)
        with allocated:
            b.call(free, [raw])
    b.ret_void()
    return fn


def _release(module: ir.Module, slots: ir.GlobalVariable, free: ir.Function) -> None:
    """Frees every kept block; called when no entry can run any more."""
    fn = ir.Function(module, ir.FunctionType(_VOID, []), SCRATCH_RELEASE_SYMBOL)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    for i in range(SLOTS):
        base_word = _word(b, slots, I64(i), 2)
        b.call(free, [b.inttoptr(b.load(base_word), _I8P)])
        b.store(I64(0), base_word)
        b.store(I64(0), _word(b, slots, I64(i), 1))
    b.ret_void()
