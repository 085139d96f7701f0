"""The executor that several threads run together over one batch of native dispatches: how a
local-task device spreads a command buffer over its threads with Python entered once per
execute, not once per dispatch.

Work is handed out as tickets: each row (dispatch) has its workgroups cut into `tickets`
contiguous ranges of (nearly) equal size, at most one per thread. One range per thread, as a split
over threads gives: an entry point call packs its operands and takes its scratch per call, so
smaller pieces would repeat that work. Ticket l of a row is the home of the thread in slot l
(mod the row's tickets): each thread walks the rows in order and claims its home ticket first,
with one atomic exchange, then any other ticket of the row that no thread has claimed yet. So a
thread that joins late (Python wakes a helper in tens of microseconds) or runs slowly finds its
share taken and moves on, no thread needs to know how many others run, and when both keep pace
each thread works on the same part of every dispatch: the rows of an image one dispatch wrote
from this core's L2 are the rows the next one reads here (MobileNetV2 on local-task: 0.90x the
time of tickets taken in arrival order, where the halves swapped threads at random).

Order comes from phases. Rows of one phase are independent (no execution barrier, no byte range
written by one and touched by another), so their tickets run in any order on any thread; the
first row of a phase waits until every ticket before it is done. Rows of a later phase copy that
wait, so no ticket past a phase start completes before the phase may start, and `done >= start`
means exactly "everything before the phase is finished".

A failed run-time check stops the batch: the first failing row is kept with its thread's fault
record, threads take no further tickets and waits give up. The leader (slot 0, the thread whose
execute this is) returns only when the batch is over, every ticket done or, after a failure, no
thread still inside, so the caller may free what the rows point at."""

from __future__ import annotations

import ctypes
from typing import Callable

import llvmlite.binding as llvm
import llvmlite.ir as ir

from weir.runtime.jit import BuiltOnce, JitFunction

# Words of a row: entry point address, first binding, number of bindings, push constants'
# address, workgroup count, tickets, the done count its phase waits for, its first ticket.
ROW_FIELDS = 8
# Words of the shared state: rows, tickets done, failed row + 1 (0: none), the slot of the
# failing thread, total tickets, threads inside the executor; then a claim word per ticket.
STATE_WORDS = 6
ROWS, _DONE, _FAILED, FAILED_SLOT, TOTAL, _ACTIVE = range(STATE_WORDS)
# Spins with a pause before a wait starts yielding the core: a wait of a few microseconds (the
# other thread finishing a small dispatch) is the common case, a long one must not burn the core
# another process (or another device's thread) could use.
_SPINS = 200
MAX_BINDINGS = 256

SHARED_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                               ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)

_I64 = ir.IntType(64)


def _c(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


class _Builder:
    """The executor's IR: loop variables live in allocas (the executor's own cost is a few
    instructions per ticket, next to a kernel's microseconds)."""

    def __init__(self, module: ir.Module) -> None:
        i8p = ir.IntType(8).as_pointer()
        i64p = _I64.as_pointer()
        self.entry_type = ir.FunctionType(_I64, [i8p, i8p, _I64, _I64, i64p])
        self.fn = ir.Function(module, ir.FunctionType(
            _I64, [i64p, i64p, i64p, i64p, i64p, i64p, _I64]), name="weir_replay_shared")
        self.yield_fn = ir.Function(module, ir.FunctionType(ir.IntType(32), []),
                                    name="sched_yield")
        # x86's spin-wait hint (eases the sibling hyperthread and the exit from the spin).
        self.pause = ir.Function(module, ir.FunctionType(ir.VoidType(), []),
                                 name="llvm.x86.sse2.pause") if llvm.get_process_triple(
                                 ).startswith(("x86_64", "i686", "i386")) else None
        self.b = ir.IRBuilder(self.fn.append_basic_block("start"))
        # Every alloca in the entry block: one in a loop would grow the stack per iteration.
        self.spins = self.b.alloca(_I64)

    def word(self, base: ir.Value, index: int | ir.Value) -> ir.Value:
        return self.b.gep(base, [_c(index) if isinstance(index, int) else index])

    def load(self, pointer: ir.Value) -> ir.Value:
        return self.b.load_atomic(pointer, "acquire", 8)

    def add(self, pointer: ir.Value, value: int) -> ir.Value:
        return self.b.atomic_rmw("add", pointer, _c(value), "seq_cst")

    def wait_until(self, ready: Callable[[], ir.Value], give_up: ir.Value) -> None:
        """Spins (then yields) until `ready()` or `*give_up != 0`; continues in a fresh block."""
        b = self.b
        spins = self.spins
        b.store(_c(0), spins)
        check = self.fn.append_basic_block("wait_check")
        idle = self.fn.append_basic_block("wait_idle")
        over = self.fn.append_basic_block("wait_over")
        b.branch(check)
        b.position_at_end(check)
        stop = b.or_(ready(), b.icmp_signed("!=", self.load(give_up), _c(0)))
        b.cbranch(stop, over, idle)
        b.position_at_end(idle)
        n = b.add(b.load(spins), _c(1))
        b.store(n, spins)
        spin = self.fn.append_basic_block("wait_spin")
        relax = self.fn.append_basic_block("wait_yield")
        b.cbranch(b.icmp_signed("<", n, _c(_SPINS)), spin, relax)
        b.position_at_end(spin)
        if self.pause is not None:
            b.call(self.pause, [])
        b.branch(check)
        b.position_at_end(relax)
        b.call(self.yield_fn, [])
        b.branch(check)
        b.position_at_end(over)


def _shared_ir() -> ir.Module:
    """weir_replay_shared(rows, slots, gather, offsets, state, faults, slot) -> failed row
    + 1 or 0 (meaningful for the leader, slot 0). Binding j of row r points at
    slots[gather[first + j]] + offsets[first + j]; the thread in `slot` writes a failed check's
    record to faults[4 * slot ...]."""
    module = ir.Module(name="weir_replay_shared")
    module.triple = llvm.get_process_triple()
    x = _Builder(module)
    b = x.b
    fn = x.fn
    rows, slots, gather, offsets, state, faults, slot = fn.args
    failed_at = x.word(state, _FAILED)
    done_at = x.word(state, _DONE)
    active = x.word(state, _ACTIVE)
    total = b.load(x.word(state, TOTAL))
    pointers = b.alloca(_I64, _c(MAX_BINDINGS))
    j_var = b.alloca(_I64)
    never = b.alloca(_I64)         # a give-up flag that is never set
    b.store(_c(0), never)
    count = b.load(x.word(state, ROWS))
    claims = x.word(state, STATE_WORDS)
    x.add(active, 1)

    # Walk the rows in order; in each, try the thread's own ticket first, then the others.
    row_var, tries_var = b.alloca(_I64), b.alloca(_I64)
    b.store(_c(0), row_var)
    rows_at = fn.append_basic_block("rows")
    leave = fn.append_basic_block("leave")
    b.branch(rows_at)

    # The next row, or leave when the rows are over or the batch failed.
    b.position_at_end(rows_at)
    next_row = fn.append_basic_block("next_row")
    stopped = b.icmp_signed("!=", x.load(failed_at), _c(0))
    b.cbranch(b.or_(stopped, b.icmp_signed(">=", b.load(row_var), count)), leave, next_row)
    b.position_at_end(next_row)
    b.store(_c(0), tries_var)
    try_at = fn.append_basic_block("try")
    b.branch(try_at)

    # Try ticket (slot + tries) mod tickets of the row, the thread's own first: claimed unless
    # another thread was first.
    b.position_at_end(try_at)
    r = b.load(row_var)
    row = b.gep(rows, [b.mul(r, _c(ROW_FIELDS))])
    tickets = b.load(x.word(row, 5))
    tries = b.load(tries_var)
    row_done = fn.append_basic_block("row_done")
    attempt = fn.append_basic_block("attempt")
    b.cbranch(b.icmp_signed(">=", tries, tickets), row_done, attempt)
    b.position_at_end(row_done)
    b.store(b.add(r, _c(1)), row_var)
    b.branch(rows_at)
    b.position_at_end(attempt)
    b.store(b.add(tries, _c(1)), tries_var)
    local = b.urem(b.add(slot, tries), tickets)
    claim = x.word(claims, b.add(b.load(x.word(row, 7)), local))
    # A plain look first: a ticket already taken costs no write to a shared line.
    taken = b.icmp_signed("!=", x.load(claim), _c(0))
    exchange = fn.append_basic_block("exchange")
    b.cbranch(taken, try_at, exchange)
    b.position_at_end(exchange)
    won = b.icmp_signed("==", b.atomic_rmw("xchg", claim, _c(1), "seq_cst"), _c(0))
    found = fn.append_basic_block("found")
    b.cbranch(won, found, try_at)

    # Wait for the row's phase, then run the ticket's workgroups.
    b.position_at_end(found)
    field = [b.load(x.word(row, k)) for k in range(ROW_FIELDS)]
    wait_for = field[6]
    x.wait_until(lambda: b.icmp_signed(">=", x.load(done_at), wait_for), failed_at)
    go = fn.append_basic_block("go")
    b.cbranch(b.icmp_signed("!=", x.load(failed_at), _c(0)), leave, go)
    b.position_at_end(go)
    first, bindings = field[1], field[2]
    b.store(_c(0), j_var)
    bind_check = fn.append_basic_block("bind_check")
    bind_body = fn.append_basic_block("bind_body")
    call = fn.append_basic_block("call")
    b.branch(bind_check)
    b.position_at_end(bind_check)
    j = b.load(j_var)
    b.cbranch(b.icmp_signed("<", j, bindings), bind_body, call)
    b.position_at_end(bind_body)
    k = b.add(first, j)
    address = b.add(b.load(b.gep(slots, [b.load(b.gep(gather, [k]))])),
                    b.load(b.gep(offsets, [k])))
    b.store(address, b.gep(pointers, [j]))
    b.store(b.add(j, _c(1)), j_var)
    b.branch(bind_check)

    b.position_at_end(call)
    # Ticket l of T covers workgroups [l * count / T, (l + 1) * count / T).
    begin = b.sdiv(b.mul(local, field[4]), field[5])
    end = b.sdiv(b.mul(b.add(local, _c(1)), field[4]), field[5])
    i8p = ir.IntType(8).as_pointer()
    record = b.gep(faults, [b.mul(slot, _c(4))])
    status = b.call(b.inttoptr(field[0], x.entry_type.as_pointer()),
                    [b.bitcast(pointers, i8p), b.inttoptr(field[3], i8p), begin, end, record])
    ok = fn.append_basic_block("ok")
    bad = fn.append_basic_block("bad")
    b.cbranch(b.icmp_signed("==", status, _c(0)), ok, bad)
    b.position_at_end(ok)
    x.add(done_at, 1)
    b.branch(try_at)
    b.position_at_end(bad)
    won = b.cmpxchg(failed_at, _c(0), b.add(r, _c(1)), "seq_cst", "seq_cst")
    record_slot = fn.append_basic_block("record_slot")
    b.cbranch(b.extract_value(won, 1), record_slot, leave)
    b.position_at_end(record_slot)
    b.store_atomic(slot, x.word(state, FAILED_SLOT), "seq_cst", 8)
    b.branch(leave)

    # Leave; the leader then waits for the end of the batch.
    b.position_at_end(leave)
    x.add(active, -1)
    helper = fn.append_basic_block("helper")
    leader = fn.append_basic_block("leader")
    b.cbranch(b.icmp_signed("==", slot, _c(0)), leader, helper)
    b.position_at_end(helper)
    b.ret(_c(0))
    b.position_at_end(leader)
    x.wait_until(lambda: b.icmp_signed(">=", x.load(done_at), total), failed_at)
    drained = fn.append_basic_block("drained")
    draining = fn.append_basic_block("draining")
    b.cbranch(b.icmp_signed("==", x.load(failed_at), _c(0)), drained, draining)
    b.position_at_end(draining)
    # After a failure, no thread may still be running a workgroup when the caller returns.
    x.wait_until(lambda: b.icmp_signed("==", x.load(active), _c(0)), never)
    b.branch(drained)
    b.position_at_end(drained)
    b.ret(x.load(failed_at))
    return module


class _SharedExecutor:
    def __init__(self) -> None:
        self._code = JitFunction(_shared_ir(), "weir_replay_shared")
        self.address = self._code.address  # what helpers call from the work board
        self.run = SHARED_TYPE(self._code.address)


_SHARED = BuiltOnce(_SharedExecutor)


def shared_executor() -> _SharedExecutor:
    """Built on first use, once per process: a cache of generated code, not state."""
    return _SHARED.get()
