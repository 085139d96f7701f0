"""Runs a sequence of llvm-cpu dispatches with one native call: a table of (entry point, binding
pointers, push constants, workgroup range) rows walked by a small executor that LLVM generates
once per process. Python and the GIL are entered once per sequence, not once per dispatch.

Why a generated executor rather than a ctypes call per dispatch: the kernels of a model's small
dispatches take a microsecond or two; a ctypes call with its argument conversions, plus the
Python loop around it, costs as much again. Walking the table in native code costs nanoseconds.

The rows are checked before they are built (`LoadedNativeExecutable.native_call` runs the same
bounds checks as a dispatch), so the executor trusts them. `run` walks the rows on the calling
thread (local-sync); `run_shared` lets a local-task device's threads walk them together
(shared_replay.py), each dispatch's workgroups spread over them."""

from __future__ import annotations

import array
import ctypes
import functools
from collections import Counter
from typing import Callable, Sequence

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from weir.errors import RuntimeFault
from weir.runtime.jit import BuiltOnce, JitFunction
from weir.runtime.executables.shared_replay import (
    MAX_BINDINGS,
    FAILED_SLOT,
    ROW_FIELDS,
    ROWS,
    STATE_WORDS,
    TOTAL,
    shared_executor,
)
from weir.runtime.hal.executable import NativeCall

# Runs the leader's call on this thread while the device's other threads call the native
# function with the arguments and slots 1 .. threads-1 (at most): `WorkgroupRunner.share`.
Share = Callable[[int, Sequence[int], int, Callable[[], int]], int]

# Each row (ROW_FIELDS words): entry point address, first binding (index into the gather and
# offset arrays), number of bindings, push constant array address, workgroup count, then what
# only the shared executor reads (tickets, the done count its phase waits for, its first ticket).
_EXECUTOR_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                                  ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                  ctypes.c_void_p)
# A failed check's four words (check, dimension, index, size), written by the kernel.
_FaultRecord = ctypes.c_int64 * 4
# `weir_replay_words(words)`: the same executor with its arguments in one array of 64-bit words,
# WORDS_HEADER of them (rows, row count, gather, offsets, the fault record's four words), then
# one word per slot of the binding table: its buffer's array (`id`) where the executor reads
# the data pointer from the array itself (`_Executor.words_hold_arrays`), else its address.
# A ctypes call costs about 0.11 µs per argument and a fresh fault record 0.23 µs, and a fresh
# buffer's address 0.4-0.6 µs in Python: one pointer to words the caller builds anyway, holding
# what costs nothing to find, is the cheap form.
_WORDS_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)
WORDS_HEADER = 8
_FAULT_WORD = 4


def array_data_offset() -> int | None:
    """Where a numpy array object holds the address of its data: numpy's C ABI puts it first
    after the object header (`PyArrayObject_fields.data`, what `PyArray_DATA` reads in every
    compiled extension). Checked on probe arrays (owning, a view, read-only); None when it is
    not there, and the executor is then given addresses."""
    offset = object.__basicsize__
    backing = np.arange(4.0)
    backing.flags.writeable = False
    for probe in (np.zeros(3, np.uint8), np.arange(6.0)[2:], backing[1:]):
        if ctypes.c_uint64.from_address(id(probe) + offset).value != probe.ctypes.data:
            return None
    return offset


def _executor_ir(data_offset: int | None) -> ir.Module:
    """weir_replay(rows, count, slots, gather, offsets, fault): for each row, binding j's pointer
    is slots[gather[first + j]] + offsets[first + j]; then the entry point is called with them.
    Returns 0, or the number of the row whose entry point failed a check plus one (the rows
    after it do not run; the entry point wrote `fault`). weir_replay_words(words): the same
    with the arguments in words; with a `data_offset`, its slots hold numpy arrays, whose data
    pointers it reads at that offset."""
    i64 = ir.IntType(64)
    i64p = i64.as_pointer()
    module = ir.Module(name="weir_replay")
    module.triple = llvm.get_process_triple()
    fn = _replay_function(module, "weir_replay", None)
    from_words = fn if data_offset is None else \
        _replay_function(module, "weir_replay_arrays", data_offset)
    words_fn = ir.Function(module, ir.FunctionType(i64, [i64p]), name="weir_replay_words")
    b = ir.IRBuilder(words_fn.append_basic_block("start"))
    words = words_fn.args[0]
    word = [b.load(b.gep(words, [ir.Constant(i64, k)])) for k in range(_FAULT_WORD)]
    b.ret(b.call(from_words, [b.inttoptr(word[0], i64p), word[1],
                              b.gep(words, [ir.Constant(i64, WORDS_HEADER)]),
                              b.inttoptr(word[2], i64p), b.inttoptr(word[3], i64p),
                              b.gep(words, [ir.Constant(i64, _FAULT_WORD)])]))
    return module


def _replay_function(module: ir.Module, name: str, data_offset: int | None) -> ir.Function:
    """The executor's loop (see `_executor_ir`); with a `data_offset`, a slot's word is an
    array object and the data pointer is read from it."""
    i8p = ir.IntType(8).as_pointer()
    i64 = ir.IntType(64)
    i64p = i64.as_pointer()
    entry_type = ir.FunctionType(i64, [i8p, i8p, i64, i64, i64p])
    fn = ir.Function(module, ir.FunctionType(i64, [i64p, i64, i64p, i64p, i64p, i64p]),
                     name=name)
    table, count, slots, gather, offsets, fault = fn.args
    start = fn.append_basic_block("start")
    row_loop = fn.append_basic_block("row_loop")
    row_body = fn.append_basic_block("row_body")
    bind_loop = fn.append_basic_block("bind_loop")
    bind_body = fn.append_basic_block("bind_body")
    call = fn.append_basic_block("call")
    next_row = fn.append_basic_block("next_row")
    failed = fn.append_basic_block("failed")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(start)
    pointers = b.alloca(i64, ir.Constant(i64, MAX_BINDINGS))
    b.branch(row_loop)

    b.position_at_end(row_loop)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), start)
    b.cbranch(b.icmp_signed("<", i, count), row_body, done)

    b.position_at_end(row_body)
    row = b.gep(table, [b.mul(i, ir.Constant(i64, ROW_FIELDS))])
    field = [b.load(b.gep(row, [ir.Constant(i64, k)])) for k in range(ROW_FIELDS)]
    first, bindings = field[1], field[2]
    b.branch(bind_loop)

    b.position_at_end(bind_loop)
    j = b.phi(i64)
    j.add_incoming(ir.Constant(i64, 0), row_body)
    b.cbranch(b.icmp_signed("<", j, bindings), bind_body, call)

    b.position_at_end(bind_body)
    k = b.add(first, j)
    slot = b.load(b.gep(gather, [k]))
    base = b.load(b.gep(slots, [slot]))
    if data_offset is not None:
        base = b.load(b.inttoptr(b.add(base, ir.Constant(i64, data_offset)), i64p))
    address = b.add(base, b.load(b.gep(offsets, [k])))
    b.store(address, b.gep(pointers, [j]))
    j.add_incoming(b.add(j, ir.Constant(i64, 1)), bind_body)
    b.branch(bind_loop)

    b.position_at_end(call)
    callee = b.inttoptr(field[0], entry_type.as_pointer())
    status = b.call(callee, [b.bitcast(pointers, i8p), b.inttoptr(field[3], i8p),
                             ir.Constant(i64, 0), field[4], fault])
    b.cbranch(b.icmp_signed("==", status, ir.Constant(i64, 0)), next_row, failed)

    b.position_at_end(next_row)
    i.add_incoming(b.add(i, ir.Constant(i64, 1)), next_row)
    b.branch(row_loop)

    b.position_at_end(failed)
    b.ret(b.add(i, ir.Constant(i64, 1)))

    b.position_at_end(done)
    b.ret(ir.Constant(i64, 0))
    return fn


class _Executor:
    """The compiled executor and the engine that owns its code. `words_hold_arrays`: what a
    slot's word of `run_words` is, its buffer's array (True) or its address."""

    def __init__(self, data_offset: int | None) -> None:
        self._code = JitFunction(_executor_ir(data_offset), "weir_replay")
        self.run = _EXECUTOR_TYPE(self._code.address)
        self.run_words = _WORDS_TYPE(self._code.function_address("weir_replay_words"))
        self.words_hold_arrays = data_offset is not None


_EXECUTOR = BuiltOnce(lambda: _Executor(array_data_offset()))


def _executor() -> _Executor:
    """Built on first use, once per process: a cache of generated code, not state."""
    return _EXECUTOR.get()


class BatchFault(RuntimeFault):
    """Row `row` of a batch failed a run-time check (the message says which); the rows before it
    ran, the rows after it did not."""

    def __init__(self, row: int, message: str) -> None:
        super().__init__(message)
        self.row = row


class NativeBatch:
    """Consecutive checked dispatches as one table; `run` executes them all in order on the
    calling thread, `run_shared` on several threads at once (shared_replay.py).

    Each binding is a slot and a byte offset: one-shot batches give every binding its own slot,
    the buffer's address (`run()`); a reusable command buffer's batch names the slots of its
    binding table and takes the table's addresses on each run (`run(addresses)`). Nothing is
    written per run, so concurrent runs of one batch share nothing mutable.

    `phases[i]` says row i must wait for every row before it (an execution barrier or a data
    dependency lies between them); `threads` is how many threads `run_shared` may use. A batch
    whose phases each hold a single ticket has nothing to spread: `shared` is then False."""

    __slots__ = ("_rows", "_count", "_gather", "_offsets", "_constants", "_own", "_keep",
                 "names", "counts", "_gather_at", "_offsets_at", "_rows_at", "_run",
                 "_faults", "shared", "_threads", "_total", "words", "_run_words",
                 "words_hold_arrays")

    def __init__(self, calls: Sequence[NativeCall], names: Sequence[str],
                 slots: Sequence[Sequence[tuple[int, int]]] | None = None,
                 phases: Sequence[bool] | None = None, threads: int = 1) -> None:
        # Push constants are 64-bit words: an unsigned value above 2^63 is the same bits.
        constants = [k - (1 << 64) if k >= 1 << 63 else k for c in calls for k in c.constants]
        self._constants = np.array(constants or [0], dtype=np.int64)
        if slots is None:
            own = [a for c in calls for a in c.addresses]
            self._own: ctypes.Array[ctypes.c_uint64] | None = (ctypes.c_uint64 * max(1, len(own)))(*own)
            gather = list(range(len(own)))
            offsets = [0] * len(own)
            self._keep: list[object] = [c.keep for c in calls]
        else:  # (slot, byte offset) per binding
            self._own = None
            gather = [slot for row in slots for slot, _ in row]
            offsets = [offset for row in slots for _, offset in row]
            self._keep = [c.keep[0] for c in calls]  # the executables, not the first buffers
        self._gather = np.array(gather or [0], dtype=np.int64)
        self._offsets = np.array(offsets or [0], dtype=np.int64)
        base_c = self._constants.ctypes.data
        rows = np.empty((len(calls), ROW_FIELDS), dtype=np.uint64)
        first = offset_c = ticket = phase_start = 0
        widest = 0  # the most tickets of any phase
        for r, c in enumerate(calls):
            tickets = min(c.count, threads)
            if r and (phases is None or phases[r]):
                phase_start = ticket
            rows[r] = (c.fn, first, len(c.addresses), base_c + 8 * offset_c, c.count, tickets,
                       phase_start, ticket)
            first += len(c.addresses)
            offset_c += len(c.constants)
            ticket += tickets
            widest = max(widest, ticket - phase_start)
        self._rows = rows
        self._count = len(calls)
        self._total = ticket
        self._threads = threads
        self.shared = threads > 1 and widest > 1
        self.names = tuple(names)
        self._faults = tuple(c.fault_message for c in calls)
        # Each entry point once with its number of dispatches: what the statistics add per run,
        # so counting costs per distinct entry point rather than per dispatch.
        self.counts: tuple[tuple[str, int], ...] = tuple(Counter(self.names).items())
        self._run = _executor().run
        # Addresses of the fixed arrays, taken once: numpy's `.ctypes` costs microseconds.
        self._gather_at = self._gather.ctypes.data
        self._offsets_at = self._offsets.ctypes.data
        self._rows_at = rows.ctypes.data
        # The header of `run_words`' words (signed: the fault record's words are), which a
        # caller copies and appends the binding table's addresses to.
        self.words = array.array("q", (self._rows_at, self._count, self._gather_at,
                                       self._offsets_at, 0, 0, 0, 0))
        executor = _executor()
        self._run_words = executor.run_words
        self.words_hold_arrays = executor.words_hold_arrays

    def run(self, slot_addresses: ctypes.Array[ctypes.c_uint64] | array.array[int] | None = None
            ) -> None:
        """`slot_addresses`: the binding table's addresses, as 64-bit words (a ctypes array or
        an `array.array('Q')`, which is several times cheaper to build per call). Raises
        BatchFault when a dispatch fails a run-time check."""
        record = _FaultRecord()
        if slot_addresses is None:
            failed = self._run(self._rows_at, self._count, self._own, self._gather_at,
                               self._offsets_at, record)
        elif type(slot_addresses) is array.array:
            failed = self._run(self._rows_at, self._count, slot_addresses.buffer_info()[0],
                               self._gather_at, self._offsets_at, record)
        else:
            failed = self._run(self._rows_at, self._count, slot_addresses, self._gather_at,
                               self._offsets_at, record)
        if failed:
            row = failed - 1
            raise BatchFault(row, self._faults[row](tuple(record)))  # type: ignore[arg-type]

    def run_words(self, words: array.array[int]) -> None:
        """`run` with a reusable command buffer's binding table given as `words`: a copy of
        `self.words` followed by a word per slot, its buffer's array (`id(buffer.data)`) when
        `words_hold_arrays`, else its address (`ReusablePlan.words_if_fits`). The native call
        takes one argument and writes a failed check into the words themselves. Raises
        BatchFault."""
        failed = self._run_words(words.buffer_info()[0])
        if failed:
            row = failed - 1
            raise BatchFault(row, self._faults[row](tuple(words[_FAULT_WORD:WORDS_HEADER])))  # type: ignore[arg-type]

    def run_shared(self, share: Share,
                   slot_addresses: ctypes.Array[ctypes.c_uint64] | array.array[int] | None = None
                   ) -> None:
        """As `run`, with the device's other threads taking tickets beside the calling one
        (`share` hands them the executor). Returns when every row has run or one failed."""
        if slot_addresses is None:
            slots_at = ctypes.addressof(self._own)  # type: ignore[arg-type]
        elif type(slot_addresses) is array.array:
            slots_at = slot_addresses.buffer_info()[0]
        else:
            slots_at = ctypes.addressof(slot_addresses)
        state = (ctypes.c_int64 * (STATE_WORDS + self._total))()  # claims start at zero
        state[ROWS] = self._count
        state[TOTAL] = self._total
        faults = (ctypes.c_int64 * (4 * self._threads))()
        executor = shared_executor()
        args = (self._rows_at, slots_at, self._gather_at, self._offsets_at,
                ctypes.addressof(state), ctypes.addressof(faults))
        # `share` returns only when no helper is inside the executor any more, so the arrays
        # the helpers read outlive their use.
        failed = share(executor.address, args, self._threads,
                       functools.partial(executor.run, *args, 0))
        if failed:
            row = failed - 1
            at = 4 * state[FAILED_SLOT]
            raise BatchFault(row, self._faults[row](tuple(faults[at:at + 4])))  # type: ignore[arg-type]

