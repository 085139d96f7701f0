"""The executor that several threads run together over one batch of native dispatches: how a
local-task device spreads a command buffer over its threads with Python entered once per
execute, not once per dispatch.

Work is handed out as tickets: each row (dispatch) has its workgroups cut into `tickets`
contiguous ranges of (nearly) equal size, at most one per thread, numbered one after the other
across the rows. One range per thread, as a split over threads gives: an entry point call packs
its operands and takes its scratch per call, so smaller pieces would repeat that work. A thread takes the next
ticket with one atomic add, so a thread that joins late (Python wakes a helper in tens of
microseconds) simply takes what is left, and no thread ever needs to know how many others run.

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
# address, workgroup count, tickets, the done count its phase waits for.
ROW_FIELDS = 7
# Words of the shared state: next ticket, tickets done, failed row + 1 (0: none), the slot of the
# failing thread, total tickets, threads inside the executor.
STATE_WORDS = 6
_NEXT, _DONE, _FAILED, FAILED_SLOT, TOTAL, _ACTIVE = range(STATE_WORDS)
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
    row_var = b.alloca(_I64)       # the row of the thread's last ticket (tickets only increase)
    row_first = b.alloca(_I64)     # that row's first ticket
    b.store(_c(0), row_var)
    b.store(_c(0), row_first)
    x.add(active, 1)

    take = fn.append_basic_block("take")
    leave = fn.append_basic_block("leave")
    b.branch(take)

    # Take a ticket unless the batch failed or ran out.
    b.position_at_end(take)
    have = fn.append_basic_block("have")
    stopped = b.icmp_signed("!=", x.load(failed_at), _c(0))
    got = fn.append_basic_block("got")
    b.cbranch(stopped, leave, got)
    b.position_at_end(got)
    ticket = x.add(x.word(state, _NEXT), 1)
    b.cbranch(b.icmp_signed(">=", ticket, total), leave, have)

    # Find the ticket's row: move forward past rows whose tickets end at or before it.
    b.position_at_end(have)
    seek = fn.append_basic_block("seek")
    advance = fn.append_basic_block("advance")
    found = fn.append_basic_block("found")
    b.branch(seek)
    b.position_at_end(seek)
    r = b.load(row_var)
    first_ticket = b.load(row_first)
    row = b.gep(rows, [b.mul(r, _c(ROW_FIELDS))])
    tickets = b.load(x.word(row, 5))
    b.cbranch(b.icmp_signed(">=", ticket, b.add(first_ticket, tickets)), advance, found)
    b.position_at_end(advance)
    b.store(b.add(first_ticket, tickets), row_first)
    b.store(b.add(r, _c(1)), row_var)
    b.branch(seek)

    # Wait for the row's phase, then run the ticket's workgroups.
    b.position_at_end(found)
    r = b.load(row_var)
    row = b.gep(rows, [b.mul(r, _c(ROW_FIELDS))])
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
    local = b.sub(ticket, b.load(row_first))
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
    b.branch(take)
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
