"""Replays commands on the calling thread. Shared by every local driver: local-sync calls it
inline, a local-task driver calls it from a worker once the queue operation's waits are met."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from weir.errors import RuntimeFault
from weir.runtime.hal.buffer import Buffer
from weir.runtime.executables.native_replay import BatchFault, NativeBatch
from weir.runtime.hal.command_buffer import (
    Command,
    CommandBuffer,
    CopyCommand,
    DispatchCommand,
    FillCommand,
)
from weir.runtime.hal.command_replay import (
    batch_failure,
    check_table,
    dispatch_failure,
    one_shot_plan,
    resolve,
    ReusablePlan,
    run_batch,
    run_native,
)
from weir.runtime.hal.statistics import DeviceStatistics, dispatch_names
from weir.runtime.hal.workgroups import WorkgroupRunner


def copy_bytes(src: Buffer, src_offset: int, dst: Buffer, dst_offset: int, length: int) -> None:
    src.check_range(src_offset, length, "copy source")
    target = dst.writable_bytes(dst_offset, length, "copy target")
    target[...] = src.data[src_offset:src_offset + length]


def fill_bytes(dst: Buffer, offset: int, length: int, pattern: bytes) -> None:
    if not pattern or length % len(pattern):
        raise RuntimeFault(f"fill: pattern of {len(pattern)} bytes cannot fill {length}")
    target = dst.writable_bytes(offset, length, "fill target")
    target.reshape(-1, len(pattern))[...] = np.frombuffer(pattern, dtype=np.uint8)


def execute_command_buffers(command_buffers: Sequence[CommandBuffer],
                            statistics: DeviceStatistics, runner: WorkgroupRunner,
                            bindings: tuple[Buffer, ...] | None = None) -> None:
    """The work of one `queue_execute`: the command buffers in order (`bindings`: the binding
    table of reusable ones). `statistics` belongs to the device whose queue runs this work (not
    the one that recorded the buffers): each dispatch that returns and each command buffer that
    runs to its end is counted there, once the execute ends or fails."""
    if bindings is not None and len(command_buffers) == 1:
        # A compiled program's usual execute: one memoized command buffer that its plan
        # replays as one native call, counted per entry point rather than per dispatch.
        threads = runner.concurrency
        try:
            batch = replay_memoized(command_buffers[0], runner, bindings)
        except BatchFault as fault:
            # The same failure, named by its dispatch, as the general path reports it.
            ran: list[str] = []
            error = batch_failure(command_buffers[0].plans[threads].single,  # type: ignore[union-attr]
                                  fault, ran)
            statistics.record_executed(ran, 0)
            raise error from None
        if batch is not None:
            statistics.shard().count_batch(batch.counts)
            return
    dispatched: list[str] = []
    finished = 0
    try:
        for cb in command_buffers:
            _execute_command_buffer(cb, runner, dispatched, bindings)
            finished += 1
    finally:
        statistics.record_executed(dispatched, finished)


def replay_memoized(cb: CommandBuffer, runner: WorkgroupRunner,
                    table: tuple[Buffer, ...]) -> NativeBatch | None:
    """The batch that ran, when `cb` is a finalized reusable command buffer already planned
    for this kind of runner as a single batch and `table` fits it; None with nothing run
    otherwise: the general path then plans, checks and fails with its own messages."""
    if type(cb) is not CommandBuffer or cb.binding_count != len(table):
        return None
    plan = cb.plans.get(runner.concurrency)
    if type(plan) is not ReusablePlan:
        return None
    batch = plan.single  # the usual plan: every command in one native batch
    if batch is None:
        return None
    # The plan has cb.binding_count slots (made after check_table), as many as `table` has.
    addresses = plan.addresses_if_fits(table)  # None: some buffer does not fit
    if addresses is None:
        return None
    if batch.shared:  # `run_native`, written out on every call's path
        batch.run_shared(runner.share, addresses)
    else:
        batch.run(addresses)
    return batch


def _execute_command_buffer(cb: CommandBuffer, runner: WorkgroupRunner, dispatched: list[str],
                            table: tuple[Buffer, ...] | None) -> None:
    """Appends the name of each dispatch that returns to `dispatched`."""
    if not isinstance(cb, CommandBuffer):
        raise RuntimeFault(f"queue execute: expected command buffers, got {type(cb).__name__}")
    if not cb.finalized:
        raise RuntimeFault("queue execute: the command buffer was not finalized")
    check_table(cb.binding_count, table)
    threads = runner.concurrency
    if table is not None:
        plan = cb.plans.get(threads)
        if plan is None:
            plan = cb.plans[threads] = ReusablePlan(cb.commands, table, threads, len(table))
        assert isinstance(plan, ReusablePlan)
        addresses = plan.addresses_if_fits(table)
        if addresses is not None:
            plan.run(table, addresses, runner, _run_command, dispatched)
            return
        # Some buffer is too small or read-only: replay command by command, which fails at
        # the dispatch concerned with its own message.
        commands: Sequence[Command] = [resolve(c, table) for c in cb.commands]
    else:
        commands = cb.commands
    for step in one_shot_plan(commands, threads):
        if type(step) is NativeBatch:
            run_batch(step, dispatched, None, runner)
        else:
            _run_command(step, runner, dispatched)


def _run_command(cmd: Command, runner: WorkgroupRunner, dispatched: list[str]) -> None:
    if type(cmd) is DispatchCommand:
        executable, entry, workgroups, constants, bindings = cmd
        try:
            executable.dispatch(entry, workgroups, constants, bindings, runner)  # type: ignore[arg-type]
        except Exception as e:
            raise dispatch_failure(dispatch_names(executable)[entry], e) from e
        dispatched.append(dispatch_names(executable)[entry])
    elif isinstance(cmd, CopyCommand):
        copy_bytes(cmd.src, cmd.src_offset, cmd.dst, cmd.dst_offset, cmd.length)
    elif isinstance(cmd, FillCommand):
        fill_bytes(cmd.dst, cmd.offset, cmd.length, cmd.pattern)
