"""Scratch memory kept between calls, shared by every executable of the process.

Entries allocate scratch (a padded input's rows, NCHW input converted to NHWC, intermediates no
binding holds) on every call. With malloc and free, a block of more than glibc's mmap threshold
came fresh from the kernel each time and every page of it faulted on first touch: a padded 3 x 3
convolution of 56 x 56 x 64 spent a fifth of its time in the page-fault handler, and ran 27%
slower than the same convolution unpadded. Here a few blocks are kept (`SLOTS`: more than the
blocks the threads of a device hold at once), each claimed with one compare-and-swap and grown
to the largest size asked of it, so after the first calls scratch is memory already mapped. The
blocks are one set for the whole process, not one per executable: the take and give functions
are a library object of their own (`scratch_object`), which every executable that uses scratch
carries and the loader links once (weir/runtime/executables/llvm_cpu.py), so each dispatch takes
the blocks the dispatch before it just gave back, still in the cache. (One set per executable
left each of DenseNet's 185 dispatches a cold block of its own: 1.07x the time on local-sync,
1.09x on local-task.) Blocks above
`KEEP_BYTES`, and requests when every slot is taken, still go to malloc and free.

A block starts with a header word, the index of its slot (`SLOTS` for a malloc'd one), so `give`
needs no search and no shared state but the slot's own flag."""

from __future__ import annotations

import functools
from pathlib import Path

import llvmlite.ir as ir

from weir.compiler.targets.llvm_cpu.kernel_cache import cached_object
from weir.compiler.targets.llvm_cpu.loops import I64
from weir.compiler.targets.llvm_cpu.machine import CpuTarget
from weir.compiler.targets.llvm_cpu.object_code import compile_module, object_key
from weir.compiler.targets.llvm_cpu.scalars import declared

# Blocks kept for the process (a power of two), in homes of HOME_SLOTS: a thread's search starts
# at its home (`_home`), and an entry holds at most a few blocks at once.
SLOTS = 16
HOME_SLOTS = 4
# The largest block kept (header included); larger ones are malloc'd and freed each call.
KEEP_BYTES = 16 << 20

_I8P = ir.IntType(8).as_pointer()
_VOID = ir.VoidType()
_HEADER = 64  # bytes before the memory handed out: keeps malloc's 16-byte alignment (and 64)
_WORDS = 8  # i64 words per slot, one cache line: busy flag, capacity, base address
TAKE, GIVE = "weir_scratch_take", "weir_scratch_give"
SLOTS_SYMBOL = "weir.scratch.slots"


def scratch_functions(module: ir.Module) -> tuple[ir.Function, ir.Function]:
    """(take, give) as an entry's module calls them: `take(bytes) -> i8*` and `give(i8*)`,
    declared, defined by the scratch library."""
    return (declared(module, TAKE, ir.FunctionType(_I8P, [I64])),
            declared(module, GIVE, ir.FunctionType(_VOID, [_I8P])))


def uses_scratch(module: ir.Module) -> bool:
    return TAKE in module.globals


def define_scratch(module: ir.Module) -> tuple[ir.Function, ir.Function]:
    """Defines take, give and their slots in `module` (the scratch library's)."""
    slots = ir.GlobalVariable(module, ir.ArrayType(I64, SLOTS * _WORDS), SLOTS_SYMBOL)
    slots.linkage = "internal"
    slots.initializer = ir.Constant(slots.value_type, None)
    slots.align = 64
    malloc = declared(module, "malloc", ir.FunctionType(_I8P, [I64]))
    free = declared(module, "free", ir.FunctionType(_VOID, [_I8P]))
    return _take(module, slots, malloc, free), _give(module, slots, free)


@functools.cache
def scratch_object(cpu: CpuTarget, cache_dir: Path | None = None) -> bytes:
    """The scratch library's object code: the same bytes in every executable built for `cpu`,
    so the loader links it once. Cached like the GEMM's: in this process, and in `cache_dir`
    between processes (kernel_cache.py)."""
    module = ir.Module(name="weir_scratch")
    module.triple = cpu.triple
    define_scratch(module)
    text = str(module)
    return cached_object(cache_dir, object_key(text, cpu), lambda: compile_module(text, cpu))


def _word(b: ir.IRBuilder, slots: ir.GlobalVariable, slot: ir.Value, word: int) -> ir.Value:
    return b.gep(slots, [I64(0), b.add(b.mul(slot, I64(_WORDS)), I64(word))], inbounds=True)


def _stamped(b: ir.IRBuilder, raw: ir.Value, slot: ir.Value) -> ir.Value:
    """The memory handed out from block `raw`, whose header records `slot`."""
    b.store(slot, b.bitcast(raw, I64.as_pointer()), align=8)
    return b.gep(raw, [I64(_HEADER)], inbounds=True)


def _home(module: ir.Module, b: ir.IRBuilder) -> ir.Value:
    """The first slot this thread tries: one of SLOTS / HOME_SLOTS homes, picked by a hash of
    its thread pointer, so that a thread mostly takes back the blocks it gave back itself,
    still in its own core's cache (one search order for all threads took the other thread's
    blocks half of the time: DenseNet on local-task 0.94x the time of a set per executable
    where per-thread malloc arenas gave 0.89x)."""
    pointer = declared(module, "llvm.thread.pointer", ir.FunctionType(_I8P, []))
    hashed = b.mul(b.lshr(b.ptrtoint(b.call(pointer, []), I64), I64(12)),
                   I64(0x9E3779B97F4A7C15 - (1 << 64)))
    homes = SLOTS // HOME_SLOTS
    return b.mul(b.lshr(hashed, I64(64 - (homes.bit_length() - 1))), I64(HOME_SLOTS))


def _take(module: ir.Module, slots: ir.GlobalVariable, malloc: ir.Function,
          free: ir.Function) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(_I8P, [I64]), TAKE)
    fn.attributes.add("nounwind")
    size, = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    need = b.add(size, I64(_HEADER))
    search, claim, grow, ready, next_slot, fallback = (
        fn.append_basic_block(n) for n in ("search", "claim", "grow", "ready", "next", "malloc"))
    home = _home(module, b)
    entry = b.block
    b.cbranch(b.icmp_unsigned("<=", need, I64(KEEP_BYTES)), search, fallback)

    b.position_at_end(search)
    tried = b.phi(I64, "tried")
    tried.add_incoming(I64(0), entry)
    slot = b.and_(b.add(home, tried), I64(SLOTS - 1))
    won = b.extract_value(b.cmpxchg(_word(b, slots, slot, 0), I64(0), I64(1), "acquire",
                                    "monotonic"), 1)
    b.cbranch(won, claim, next_slot)

    b.position_at_end(next_slot)
    following = b.add(tried, I64(1))
    tried.add_incoming(following, next_slot)
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
    fn = ir.Function(module, ir.FunctionType(_VOID, [_I8P]), GIVE)
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
