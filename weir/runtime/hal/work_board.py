"""Where a device's idle helper threads find native work without Python or a wake-up.

Waking a thread that sleeps on a lock costs 50-100 µs on the machines weir runs on (DESIGN.md
§12), and a helper that then needs the GIL pays a second wake-up when the thread that holds it
lets go. Both are longer than most dispatches. So a helper that has finished its work stays in
native code, with the GIL released, and watches a board in memory for `spin_us` (IREE's
`--task_worker_spin_us`; OpenMP runtimes spin the same way between parallel regions): a leader
posts a native function and its arguments there, each watching helper calls it with a slot of
its own, and the leader's `close` returns once no helper is still inside. A helper whose spin ran
out sleeps on its Python queue; `post` says how many helpers were watching, so the leader queues
a token to wake each of the others (the slow path of before).

Words of the board (int64): the generation (bumped by each post and each close), open (1 while a
post accepts helpers), the function, its six arguments, helpers inside the function, the next
free slot, the number of slots, helpers watching. A helper enters by adding itself to `inside`
and then checking `open`; `close` clears `open` and then waits for `inside` to drain: both sides
use sequentially consistent atomics, so no helper can enter after `close` has looked."""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import llvmlite.binding as llvm
import llvmlite.ir as ir

from weir.runtime.jit import BuiltOnce, JitFunction

_GEN, _OPEN, _FN, _ARGS, _INSIDE, _NEXT_SLOT, _SLOTS, _WATCHING = 0, 1, 2, 3, 9, 10, 11, 12
_WORDS = 13
ARGUMENTS = 6
_CLOCK_MONOTONIC = 1
# Checks of the board between two reads of the clock and yields of the core (a microsecond or
# two of pauses): a thread with real work waiting for this core gets it.
_CHECKS_PER_CLOCK = 64

_I64 = ir.IntType(64)
_I32 = ir.IntType(32)
_SERVE_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_POST_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)
_CLOSE_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _c(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


class _Code:
    """The three functions' IR, sharing the clock and the pause."""

    def __init__(self) -> None:
        module = ir.Module(name="weir_work_board")
        module.triple = llvm.get_process_triple()
        self.module = module
        self.timespec = ir.LiteralStructType([_I64, _I64])
        self.clock = ir.Function(module, ir.FunctionType(_I32, [_I32, self.timespec.as_pointer()]),
                                 name="clock_gettime")
        self.yield_fn = ir.Function(module, ir.FunctionType(_I32, []), name="sched_yield")
        x86 = llvm.get_process_triple().startswith(("x86_64", "i686", "i386"))
        self.pause = ir.Function(module, ir.FunctionType(ir.VoidType(), []),
                                 name="llvm.x86.sse2.pause") if x86 else None
        self._serve()
        self._post()
        self._close()

    @staticmethod
    def _word(b: ir.IRBuilder, board: ir.Value, index: int) -> ir.Value:
        return b.gep(board, [_c(index)])

    def _load(self, b: ir.IRBuilder, board: ir.Value, index: int) -> ir.Value:
        return b.load_atomic(self._word(b, board, index), "seq_cst", 8)

    def _add(self, b: ir.IRBuilder, board: ir.Value, index: int, value: int) -> ir.Value:
        """The word's old value."""
        return b.atomic_rmw("add", self._word(b, board, index), _c(value), "seq_cst")

    def _now(self, b: ir.IRBuilder, ts: ir.Value) -> ir.Value:
        b.call(self.clock, [ir.Constant(_I32, _CLOCK_MONOTONIC), ts])
        zero = ir.Constant(_I32, 0)
        sec = b.load(b.gep(ts, [zero, zero]))
        nsec = b.load(b.gep(ts, [zero, ir.Constant(_I32, 1)]))
        return b.add(b.mul(sec, _c(1_000_000_000)), nsec)

    def _serve(self) -> None:
        """weir_board_serve(board, seen, limit_ns) -> the last generation seen: runs each post
        it sees (a generation other than `seen` with the board open) and returns after limit_ns
        with nothing new. `limit_ns` 0 still runs a post already there."""
        fn = ir.Function(self.module, ir.FunctionType(_I64, [_I64.as_pointer(), _I64, _I64]),
                         name="weir_board_serve")
        board, seen_arg, limit = fn.args
        b = ir.IRBuilder(fn.append_basic_block("start"))
        ts = b.alloca(self.timespec)
        seen = b.alloca(_I64)
        count = b.alloca(_I64)
        deadline = b.alloca(_I64)
        b.store(seen_arg, seen)
        b.store(_c(0), count)
        b.store(b.add(self._now(b, ts), limit), deadline)
        self._add(b, board, _WATCHING, 1)
        check, fresh, enter, inside, call, leave, idle, timed, expired = (
            fn.append_basic_block(n) for n in ("check", "fresh", "enter", "inside", "call",
                                               "leave", "idle", "timed", "expired"))
        b.branch(check)

        b.position_at_end(check)
        gen = self._load(b, board, _GEN)
        b.cbranch(b.icmp_signed("!=", gen, b.load(seen)), fresh, idle)

        b.position_at_end(fresh)
        b.store(gen, seen)
        b.cbranch(b.icmp_signed("!=", self._load(b, board, _OPEN), _c(0)), enter, check)

        b.position_at_end(enter)
        self._add(b, board, _INSIDE, 1)
        still = b.and_(b.icmp_signed("!=", self._load(b, board, _OPEN), _c(0)),
                       b.icmp_signed("==", self._load(b, board, _GEN), gen))
        b.cbranch(still, inside, leave)

        b.position_at_end(inside)
        slot = self._add(b, board, _NEXT_SLOT, 1)
        b.cbranch(b.icmp_signed("<", slot, self._load(b, board, _SLOTS)), call, leave)

        b.position_at_end(call)
        i64p = _I64.as_pointer()
        target_type = ir.FunctionType(_I64, [i64p] * ARGUMENTS + [_I64])
        target = b.inttoptr(self._load(b, board, _FN), target_type.as_pointer())
        args = [b.inttoptr(self._load(b, board, _ARGS + i), i64p) for i in range(ARGUMENTS)]
        b.call(target, [*args, slot])
        b.branch(leave)

        b.position_at_end(leave)
        self._add(b, board, _INSIDE, -1)
        b.store(b.add(self._now(b, ts), limit), deadline)  # a new spin after each piece of work
        b.branch(check)

        b.position_at_end(idle)
        if self.pause is not None:
            b.call(self.pause, [])
        n = b.add(b.load(count), _c(1))
        b.store(n, count)
        b.cbranch(b.icmp_signed("==", b.and_(n, _c(_CHECKS_PER_CLOCK - 1)), _c(0)), timed, check)

        b.position_at_end(timed)
        over = b.icmp_signed(">=", self._now(b, ts), b.load(deadline))
        go_on = fn.append_basic_block("go_on")
        b.cbranch(over, expired, go_on)
        b.position_at_end(go_on)
        b.call(self.yield_fn, [])
        b.branch(check)

        b.position_at_end(expired)
        self._add(b, board, _WATCHING, -1)
        # A post made while this thread was leaving may have counted it as watching: look once
        # more, so that post either finds it here or queued a token for it.
        last = self._load(b, board, _GEN)
        rerun = fn.append_basic_block("rerun")
        done = fn.append_basic_block("done")
        b.cbranch(b.icmp_signed("!=", last, b.load(seen)), rerun, done)
        b.position_at_end(rerun)
        self._add(b, board, _WATCHING, 1)
        b.store(_c(0), count)
        b.branch(check)
        b.position_at_end(done)
        b.ret(b.load(seen))

    def _post(self) -> None:
        """weir_board_post(board) -> helpers watching: opens what `WorkBoard.post` wrote."""
        fn = ir.Function(self.module, ir.FunctionType(_I64, [_I64.as_pointer()]),
                         name="weir_board_post")
        (board,) = fn.args
        b = ir.IRBuilder(fn.append_basic_block("start"))
        b.store_atomic(_c(1), self._word(b, board, _OPEN), "seq_cst", 8)
        self._add(b, board, _GEN, 1)
        b.ret(self._load(b, board, _WATCHING))

    def _close(self) -> None:
        """weir_board_close(board): no helper enters after it, none is inside when it returns."""
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [_I64.as_pointer()]),
                         name="weir_board_close")
        (board,) = fn.args
        b = ir.IRBuilder(fn.append_basic_block("start"))
        b.store_atomic(_c(0), self._word(b, board, _OPEN), "seq_cst", 8)
        self._add(b, board, _GEN, 1)
        wait, idle, done = (fn.append_basic_block(n) for n in ("wait", "idle", "done"))
        b.branch(wait)
        b.position_at_end(wait)
        b.cbranch(b.icmp_signed("==", self._load(b, board, _INSIDE), _c(0)), done, idle)
        b.position_at_end(idle)
        if self.pause is not None:
            b.call(self.pause, [])
        b.branch(wait)
        b.position_at_end(done)
        b.ret_void()


class _Functions:
    def __init__(self) -> None:
        module = _Code().module
        self._code = JitFunction(module, "weir_board_serve")
        self.serve = _SERVE_TYPE(self._code.address)
        self.post = _POST_TYPE(self._code.function_address("weir_board_post"))
        self.close = _CLOSE_TYPE(self._code.function_address("weir_board_close"))


_FUNCTIONS = BuiltOnce(_Functions)


class WorkBoard:
    """One device's board. `post` and `close` are called by one leader at a time (the owner
    serialises them); `serve` by any number of helper threads."""

    __slots__ = ("_words", "_address", "_limit_ns")

    def __init__(self, spin_us: float) -> None:
        self._words = (ctypes.c_int64 * _WORDS)()
        self._address = ctypes.addressof(self._words)
        self._limit_ns = int(spin_us * 1000)

    def post(self, function: int, args: Sequence[int], slots: int) -> int:
        """Offers `function(*args, slot)` to slots 1 .. slots-1; returns how many helpers were
        watching (the others need a token to wake them)."""
        words = self._words
        words[_FN] = function
        for i, a in enumerate(args):
            words[_ARGS + i] = a
        words[_NEXT_SLOT] = 1
        words[_SLOTS] = slots
        return int(_FUNCTIONS.get().post(self._address))

    def close(self) -> None:
        """Takes the post down; returns when no helper runs it any more."""
        _FUNCTIONS.get().close(self._address)

    def serve(self, seen: int) -> int:
        """Runs posts newer than generation `seen` until `spin_us` pass with none (GIL
        released); returns the last generation seen."""
        return int(_FUNCTIONS.get().serve(self._address, seen, self._limit_ns))
