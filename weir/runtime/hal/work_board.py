"""Where a device's idle helper threads find native work without Python or a wake-up.

Waking a thread that sleeps on a lock costs 50-100 µs on the machines weir runs on (DESIGN.md
§12), and a helper that then needs the GIL pays a second wake-up when the thread that holds it
lets go. Both are longer than most dispatches. So a helper that has finished its work stays in
native code, with the GIL released, and watches a board in memory for `spin_us` (IREE's
`--task_worker_spin_us`; OpenMP runtimes spin the same way between parallel regions): a leader
posts a native function and its arguments there, each watching helper calls it with a slot of
its own, and the leader's `close` returns once no helper is still inside.

A helper whose spin ran out sleeps, in native code too where futexes exist (futex.py): on the
board's bell, which a post rings when anyone sleeps, and so does `call` (Python work for the
helpers on their queue: `serve` then returns to take it) and `prime`. A call that is about to
post (the host has started a call on the device) primes the board: sleeping helpers wake now,
while the host still converts arguments and walks the program, and every helper keeps watching
until the prime's deadline, so the first post finds them there instead of paying their wake-up
(a GPT-2 decode step's host part is longer than the spin: its helper used to join 50-100 µs
late). Without futexes a helper sleeps on its Python queue; `post` says how many helpers were
watching, and the leader queues a token to wake each of the others.

Words of the board (int64): the generation (bumped by each post and each close), open (1 while a
post accepts helpers), the function, its six arguments, helpers inside the function, the next
free slot, the number of slots, helpers watching, the bell (its low half the futex word),
helpers asleep on it, Python calls queued, and the prime's deadline (CLOCK_MONOTONIC ns). A
helper enters by adding itself to `inside` and then checking `open`; `close` clears `open` and
then waits for `inside` to drain. A sleeper counts itself asleep and then looks at the
generation, the calls and the deadline once more; a waker changes one of those and then looks
at the sleepers, ringing the bell when there are any. Both sides use sequentially consistent
atomics, so no helper enters after `close` has looked and none sleeps through a post."""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import llvmlite.binding as llvm
import llvmlite.ir as ir

from weir.runtime.hal.futex import AVAILABLE as NATIVE_SLEEP, Futex
from weir.runtime.jit import BuiltOnce, JitFunction

_GEN, _OPEN, _FN, _ARGS, _INSIDE, _NEXT_SLOT, _SLOTS, _WATCHING = 0, 1, 2, 3, 9, 10, 11, 12
_BELL, _SLEEPERS, _CALLS, _AWAKE_UNTIL = 13, 14, 15, 16
_WORDS = 17
ARGUMENTS = 6
_CLOCK_MONOTONIC = 1
# Checks of the board between two reads of the clock and yields of the core (a microsecond or
# two of pauses): a thread with real work waiting for this core gets it.
_CHECKS_PER_CLOCK = 64
# A sleeping helper looks at the board this often even if nobody rings (only a safeguard: every
# change a sleeper waits for rings the bell).
_SLEEP_NS = 1_000_000_000

_I64 = ir.IntType(64)
_I32 = ir.IntType(32)
_SERVE_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                               ctypes.c_int64)
_POST_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)
# close, call, took: (board) -> nothing.
_BOARD_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_PRIME_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)


def _c(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


class _Code:
    """The board's functions' IR, sharing the clock, the pause and the futex calls."""

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
        self.futex = Futex(module) if NATIVE_SLEEP else None
        self._serve()
        self._post()
        self._close()
        self._ring_function("weir_board_call", _CALLS, 1)
        self._ring_function("weir_board_took", _CALLS, -1)
        self._prime()

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

    def _ring(self, b: ir.IRBuilder, board: ir.Value) -> None:
        """After a change a sleeper waits for: wakes the sleepers, if there are any."""
        if self.futex is None:
            return
        with b.if_then(b.icmp_signed("!=", self._load(b, board, _SLEEPERS), _c(0))):
            self._add(b, board, _BELL, 1)
            self.futex.wake_all(b, self._word(b, board, _BELL))

    def _serve(self) -> None:
        """weir_board_serve(board, seen, limit_ns, sleep) -> the last generation seen: runs each
        post it sees (a generation other than `seen` with the board open). Without `sleep` it
        returns after limit_ns (or the prime's deadline, if later) with nothing new; `limit_ns`
        0 still runs a post already there. With `sleep` (where futexes exist) it sleeps on the
        bell instead and returns only when Python calls are queued for the helpers."""
        fn = ir.Function(self.module, ir.FunctionType(_I64, [_I64.as_pointer(), _I64, _I64,
                                                             _I64]),
                         name="weir_board_serve")
        board, seen_arg, limit, sleep_arg = fn.args
        b = ir.IRBuilder(fn.append_basic_block("start"))
        ts = b.alloca(self.timespec)
        seen = b.alloca(_I64)
        count = b.alloca(_I64)
        deadline = b.alloca(_I64)
        b.store(seen_arg, seen)
        b.store(_c(0), count)
        b.store(b.add(self._now(b, ts), limit), deadline)
        sleeps = b.icmp_signed("!=", sleep_arg, _c(0)) if self.futex is not None \
            else ir.Constant(ir.IntType(1), 0)
        self._add(b, board, _WATCHING, 1)
        check, fresh, enter, inside, call, leave, idle, spin, timed, expired, give_up = (
            fn.append_basic_block(n) for n in ("check", "fresh", "enter", "inside", "call",
                                               "leave", "idle", "spin", "timed", "expired",
                                               "give_up"))
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

        # A sleeping kind of helper also returns for Python work queued for it.
        b.position_at_end(idle)
        calls = b.icmp_signed("!=", self._load(b, board, _CALLS), _c(0))
        b.cbranch(b.and_(sleeps, calls), give_up, spin)

        b.position_at_end(spin)
        if self.pause is not None:
            b.call(self.pause, [])
        n = b.add(b.load(count), _c(1))
        b.store(n, count)
        b.cbranch(b.icmp_signed("==", b.and_(n, _c(_CHECKS_PER_CLOCK - 1)), _c(0)), timed, check)

        b.position_at_end(timed)
        now = self._now(b, ts)
        awake = b.icmp_signed("<", now, self._load(b, board, _AWAKE_UNTIL))
        over = b.and_(b.icmp_signed(">=", now, b.load(deadline)), b.not_(awake))
        go_on = fn.append_basic_block("go_on")
        b.cbranch(over, expired, go_on)
        b.position_at_end(go_on)
        b.call(self.yield_fn, [])
        b.branch(check)

        b.position_at_end(expired)
        if self.futex is not None:
            asleep = fn.append_basic_block("asleep")
            returning = fn.append_basic_block("returning")
            b.cbranch(sleeps, asleep, returning)
            b.position_at_end(asleep)
            self._sleep(b, board, seen, ts)
            b.store(_c(0), count)
            b.store(b.add(self._now(b, ts), limit), deadline)
            b.branch(check)
            b.position_at_end(returning)
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

        b.position_at_end(give_up)
        self._add(b, board, _WATCHING, -1)
        b.ret(b.load(seen))

    def _sleep(self, b: ir.IRBuilder, board: ir.Value, seen: ir.Value, ts: ir.Value) -> None:
        """Sleeps on the bell unless, once counted asleep, the board shows something new: a
        generation other than `seen`, queued calls, or a prime's deadline still ahead."""
        assert self.futex is not None
        self._add(b, board, _WATCHING, -1)
        bell = self._load(b, board, _BELL)
        self._add(b, board, _SLEEPERS, 1)
        news = b.or_(b.icmp_signed("!=", self._load(b, board, _GEN), b.load(seen)),
                     b.icmp_signed("!=", self._load(b, board, _CALLS), _c(0)))
        news = b.or_(news, b.icmp_signed("<", self._now(b, ts),
                                         self._load(b, board, _AWAKE_UNTIL)))
        with b.if_then(b.not_(news)):
            zero = ir.Constant(_I32, 0)
            b.store(_c(_SLEEP_NS // 1_000_000_000), b.gep(ts, [zero, zero]))
            b.store(_c(_SLEEP_NS % 1_000_000_000), b.gep(ts, [zero, ir.Constant(_I32, 1)]))
            self.futex.wait(b, self._word(b, board, _BELL), bell, ts)
        self._add(b, board, _SLEEPERS, -1)
        self._add(b, board, _WATCHING, 1)

    def _post(self) -> None:
        """weir_board_post(board) -> helpers watching: opens what `WorkBoard.post` wrote and
        wakes the sleepers."""
        fn = ir.Function(self.module, ir.FunctionType(_I64, [_I64.as_pointer()]),
                         name="weir_board_post")
        (board,) = fn.args
        b = ir.IRBuilder(fn.append_basic_block("start"))
        b.store_atomic(_c(1), self._word(b, board, _OPEN), "seq_cst", 8)
        self._add(b, board, _GEN, 1)
        self._ring(b, board)
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

    def _ring_function(self, name: str, index: int, delta: int) -> None:
        """name(board): adds `delta` to a word, then rings if it grew and anyone sleeps."""
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [_I64.as_pointer()]),
                         name=name)
        (board,) = fn.args
        b = ir.IRBuilder(fn.append_basic_block("start"))
        self._add(b, board, index, delta)
        if delta > 0:
            self._ring(b, board)
        b.ret_void()

    def _prime(self) -> None:
        """weir_board_prime(board, window_ns): helpers watch until window_ns from now (or a
        later deadline already set); sleeping ones wake for it."""
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [_I64.as_pointer(), _I64]),
                         name="weir_board_prime")
        board, window = fn.args
        b = ir.IRBuilder(fn.append_basic_block("start"))
        ts = b.alloca(self.timespec)
        b.atomic_rmw("max", self._word(b, board, _AWAKE_UNTIL), b.add(self._now(b, ts), window),
                     "seq_cst")
        self._ring(b, board)
        b.ret_void()


class _Functions:
    def __init__(self) -> None:
        module = _Code().module
        self._code = JitFunction(module, "weir_board_serve")
        self.serve = _SERVE_TYPE(self._code.address)
        self.post = _POST_TYPE(self._code.function_address("weir_board_post"))
        self.close = _BOARD_TYPE(self._code.function_address("weir_board_close"))
        self.call = _BOARD_TYPE(self._code.function_address("weir_board_call"))
        self.took = _BOARD_TYPE(self._code.function_address("weir_board_took"))
        self.prime = _PRIME_TYPE(self._code.function_address("weir_board_prime"))


_FUNCTIONS = BuiltOnce(_Functions)


class WorkBoard:
    """One device's board. `post` and `close` are called by one leader at a time (the owner
    serialises them); `serve` by any number of helper threads; `call`, `took` and `prime` by
    anyone."""

    __slots__ = ("_words", "_address", "_limit_ns")

    # Whether helpers sleep in native code (`serve(seen, sleep=True)`), woken by the board.
    native_sleep = NATIVE_SLEEP

    def __init__(self, spin_us: float) -> None:
        self._words = (ctypes.c_int64 * _WORDS)()
        self._address = ctypes.addressof(self._words)
        self._limit_ns = int(spin_us * 1000)

    def post(self, function: int, args: Sequence[int], slots: int) -> int:
        """Offers `function(*args, slot)` to slots 1 .. slots-1, waking helpers asleep on the
        board; returns how many helpers were watching (the others, where helpers sleep in
        Python, need a token to wake them)."""
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

    def serve(self, seen: int, sleep: bool = False) -> int:
        """Runs posts newer than generation `seen` (GIL released); returns the last generation
        seen. Without `sleep`, once `spin_us` (and any prime's deadline) pass with none; with
        it (only where `native_sleep`), once Python calls are queued (`call`), sleeping on the
        board meanwhile."""
        return int(_FUNCTIONS.get().serve(self._address, seen, self._limit_ns, int(sleep)))

    def call(self) -> None:
        """A Python call was queued for the helpers: serving helpers return to take it."""
        _FUNCTIONS.get().call(self._address)

    def took(self) -> None:
        """A helper took a queued Python call."""
        _FUNCTIONS.get().took(self._address)

    def prime(self, window_ns: int) -> None:
        """Work will be posted soon: helpers watch until `window_ns` from now, sleeping ones
        wake now."""
        _FUNCTIONS.get().prime(self._address, window_ns)

    @property
    def calls_queued(self) -> int:
        return int(self._words[_CALLS])

    @property
    def sleepers(self) -> int:
        return int(self._words[_SLEEPERS])

    @property
    def watching(self) -> int:
        return int(self._words[_WATCHING])
