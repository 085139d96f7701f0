"""The user-facing runtime API.

    >>> import numpy as np
    >>> from weir.runtime.api import Instance, Context, load_module_file
    >>> instance = Instance()
    >>> device = instance.create_device("local-sync")
    >>> module = load_module_file("simple_mul.wvm")                      # doctest: +SKIP
    >>> context = Context(instance, devices=[device], modules=[module])  # doctest: +SKIP
    >>> run = context.lookup("module.simple_mul")                        # doctest: +SKIP
    >>> run(np.ones(4, np.float32), np.arange(4, dtype=np.float32))      # doctest: +SKIP
    array([0., 1., 2., 3.], dtype=float32)

`Function.__call__` takes numpy arrays and Python scalars (arrays are checked against the
function's declared argument types; a C-contiguous array of the host's byte order is lent to
the call as it is, any other copied into a fresh device buffer in that order) and returns numpy
arrays nothing else refers to (a result buffer only the call made is handed over, any other
copied); `invoke_views` is the low-level form on BufferViews. Both take
`timeout=` seconds: every wait of the call (and every host loop) stops there with
`DeadlineExceeded`; `with deadline(seconds, "what"):` bounds several calls at once.
`await fn.call_async(...)` is the call from asyncio (asyncio_bridge.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, NoReturn, Sequence

import numpy as np

from weir.errors import InputError, LoadError, RuntimeFault, WeirError
from weir.runtime.abi_scalars import declared_scalar_types, scalar_argument, scalar_result
from weir.runtime.abi_tensors import declared_tensor_types, release_borrowed, tensor_argument
from weir.format.image import CallModel, Signature
from weir.format.module_file import deserialize, load_file
from weir.runtime.asyncio_bridge import await_scheduled, run_in_executor
from weir.runtime.hal.buffer import Allocator
from weir.runtime.hal.buffer_view import BufferView
from weir.runtime.hal.deadline import deadline
from weir.runtime.hal.device import Device
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.semaphore import Semaphore
from weir.runtime.hal.statistics import RuntimeStatistics, runtime_statistics
from weir.runtime.vm.bytecode_module import BytecodeModule
from weir.runtime.vm.context import Context as _VMContext
from weir.runtime.vm.instance import Instance
from weir.runtime.vm.module import ExportInfo, VMCallable
from weir.runtime.vm.native_module import CallerInfo, NativeModule, export
from weir.runtime.vm.python_module_loader import load_python_module

__all__ = ["BufferView", "BytecodeModule", "CallerInfo", "Context", "Device", "Fence", "Function",
           "Instance", "NativeModule", "RuntimeStatistics", "Semaphore", "check_device_count",
           "deadline", "export", "load_module_bytes", "load_module_file", "load_python_module",
           "runtime_statistics"]


def load_module_file(path: str | Path) -> BytecodeModule:
    """Maps the file (segments stay views on the mapping), verifies and translates it."""
    return BytecodeModule(load_file(path))


def load_module_bytes(data: bytes | memoryview) -> BytecodeModule:
    return BytecodeModule(deserialize(data))


class Function:
    """An exported function bound to a context. What a call needs that does not depend on its
    arguments (arity, how each argument converts, the allocator for inputs, how the results come
    back) is worked out once here: a call of a small program costs microseconds, so per-call
    lookups would be a large part of it."""

    def __init__(self, context: Context, qualified_name: str, export: ExportInfo,
                 call: VMCallable) -> None:
        self.context = context
        self.name = qualified_name
        self._export = export
        self._call = call
        self._coarse = export.model == "coarse-fences"
        self._waiting_for_signal = f"waiting for the signal fence of {qualified_name}"
        args = export.signature.args
        self._num_user_args = len(args) - 2 if self._coarse else len(args)
        self._num_results = len(export.signature.results)
        short = qualified_name.split(".", 1)[-1]
        tensors = declared_tensor_types(export.reflection_dict(), self._num_user_args)
        self._converters = tuple(
            tensor_argument(tensors[i], short, i) if t == "r" else _CONVERTERS[t]
            for i, t in enumerate(args[:self._num_user_args]))
        self._result_converters: tuple[Callable[[Any], Any], ...] = ()
        self._declared = declared_scalar_types(export.reflection_dict(), self._num_user_args,
                                               self._num_results)
        if self._declared is not None:
            self._converters = tuple(
                convert if t is None else scalar_argument(t, short, i)
                for i, (convert, t) in enumerate(zip(self._converters, self._declared[0])))
            self._result_converters = tuple(
                _from_vm if t is None else scalar_result(t) for t in self._declared[1])
        self._allocator = context.devices[0].allocator if context.devices else None
        # Devices that wake idle threads for a call (local-task): told first, so the threads
        # wake while the call's host part runs (Device.expect_work).
        self._expect_work = tuple(d.expect_work for d in context.devices
                                  if type(d).expect_work is not Device.expect_work)
        self._convert_all = _all_converted(self._converters)
        # `__call__`'s own: arrays declared as tensors are lent to the call, not copied (it
        # waits for its results, so nothing reads them later). Other arguments (an output's
        # storage is a buffer) and the other entry points (`call_async` returns first) copy.
        self._convert_lent = _all_converted(tuple(
            tensor_argument(tensors[i], short, i, borrow=True)
            if t == "r" and tensors[i] is not None else convert
            for i, (t, convert) in enumerate(zip(args, self._converters))))
        # The usual call, which `__call__` writes out: synchronous, one result, no conversion.
        self._plain = not (self._coarse or self._num_results != 1 or self._result_converters)

    @property
    def signature(self) -> Signature:
        return self._export.signature

    @property
    def model(self) -> CallModel:
        return self._export.model

    @property
    def reflection(self) -> dict[str, str]:
        return self._export.reflection_dict()

    @property
    def argument_types(self) -> tuple[str, ...]:
        """Per user argument: its element type when a scalar whose type the module declares
        (`i8`, `f16`), else its calling-convention letter (`r`, `i`, `f`, ...)."""
        letters = self.signature.args[:self._num_user_args]
        if self._declared is None:
            return tuple(letters)
        return tuple(t or c for t, c in zip(self._declared[0], letters))

    @property
    def result_types(self) -> tuple[str, ...]:
        """Per result, as `argument_types`."""
        letters = self.signature.results
        if self._declared is None:
            return tuple(letters)
        return tuple(t or c for t, c in zip(self._declared[1], letters))

    @property
    def num_user_args(self) -> int:
        """Arguments the caller supplies (coarse-fences functions get their fences added)."""
        return self._num_user_args

    def invoke_views(self, args: Sequence[Any], timeout: float | None = None) -> tuple[Any, ...]:
        """Calls with VM values (BufferViews, ints, floats, refs); returns the results as a tuple.
        For coarse-fences functions, fences are supplied and awaited here. `timeout`: seconds
        the whole call may take (`DeadlineExceeded` after); None for no limit."""
        for expect in self._expect_work:
            expect()
        self._check_arity(args)
        if timeout is not None:
            with deadline(timeout, self.name):
                return self._invoke_coarse(args) if self._coarse else self._invoke(args)
        return self._invoke_coarse(args) if self._coarse else self._invoke(args)

    def invoke_async(self, args: Sequence[Any], wait: Fence, signal: Fence,
                     timeout: float | None = None) -> tuple[Any, ...]:
        """Calls a coarse-fences function with the caller's fences and returns as soon as its
        work is scheduled. The results' contents are valid once `signal` is reached; a failure
        anywhere in the work fails `signal` with the original message (`signal.wait` raises),
        and so does an error that ends the call itself, so whatever waits on `signal` hears of
        it. `timeout` bounds the waits the call makes before it returns (imports without
        `nosideeffects` are awaited on the host), not the work it leaves queued."""
        if not self._coarse:
            raise InputError(f"function '{self.name}' uses the synchronous ABI; call it "
                             "without fences (compile with --iree-execution-model=async-external "
                             "to get a coarse-fences function)")
        for what, fence in (("wait", wait), ("signal", signal)):
            if not isinstance(fence, Fence):
                raise InputError(f"function '{self.name}': the {what} fence must be a Fence, "
                                 f"got {type(fence).__name__}")
        for expect in self._expect_work:
            expect()
        self._check_arity(args)
        try:
            if timeout is not None:
                with deadline(timeout, self.name):
                    return self._invoke([*args, wait, signal])
            return self._invoke([*args, wait, signal])
        except BaseException as error:  # Ctrl-C too: nothing may wait on `signal` forever
            signal.fail(error if isinstance(error, WeirError)
                        else f"{self.name}: interrupted ({type(error).__name__})")
            raise

    def _check_arity(self, args: Sequence[Any]) -> None:
        if len(args) != self._num_user_args:
            raise InputError(f"function '{self.name.split('.', 1)[-1]}' expects "
                             f"{self._num_user_args} argument(s), got {len(args)}")

    def _invoke_coarse(self, args: Sequence[Any]) -> tuple[Any, ...]:
        """A synchronous call of a coarse-fences function: it gets fences and is waited for."""
        signal = Fence.create()
        results = self._invoke([*args, Fence(), signal])
        signal.wait(None, self._waiting_for_signal)
        return results

    def _invoke(self, call_args: Sequence[Any]) -> tuple[Any, ...]:
        try:
            result = self._call(*call_args)
        except Exception as e:
            self._raise_call_error(e)
        nres = self._num_results
        if nres == 1:
            return (result,)
        return () if nres == 0 else tuple(result)

    def _raise_call_error(self, e: Exception) -> NoReturn:
        """Raises what a call that raised `e` raises (`_call_error`), chained to `e` unless it
        is `e` itself or an argument check's."""
        error = self._call_error(e)
        if error is e:
            raise e
        raise error from (None if isinstance(e, InputError) else e)

    def _call_error(self, e: Exception) -> Exception:
        """What a call that raised `e` raises: the program's own argument checks name the
        function, other `WeirError`s pass as they are, anything else is a `RuntimeFault`."""
        if isinstance(e, InputError):  # an argument check of the program: name the function
            if str(e).startswith("function '"):
                return e
            return InputError(f"function '{self.name.split('.', 1)[-1]}': {e}")
        if isinstance(e, WeirError):
            return e
        if isinstance(e, RecursionError):
            return RuntimeFault(f"{self.name}: call stack too deep: {e}")
        # a malformed program misusing a value (e.g. adding a buffer)
        return RuntimeFault(f"{self.name}: {type(e).__name__}: {e}")

    def __call__(self, *args: Any, timeout: float | None = None) -> Any:
        """numpy arrays / Python scalars in; numpy arrays (the caller's own) / scalars out.
        One result is returned as is, several as a tuple, none as None. `timeout`: seconds the
        call may take (its waits and host loops raise `DeadlineExceeded` after); None for no
        limit."""
        if timeout is not None:
            with deadline(timeout, self.name):
                return self(*args)
        for expect in self._expect_work:
            expect()
        if len(args) != self._num_user_args:
            self._check_arity(args)
        try:
            vm_args = self._convert_lent(args, self._allocator)
        except InputError as e:
            raise self._which_argument(args, e) from None
        try:
            if not self._plain:
                return self._from_vm_results(
                    self._invoke_coarse(vm_args) if self._coarse else self._invoke(vm_args),
                    owned=True)
            # The usual call, written out: a synchronous function with one result (a few
            # frames and tuples fewer on a path that costs tens of microseconds in all).
            try:
                result = self._call(*vm_args)
            except Exception as e:
                self._raise_call_error(e)
            if type(result) is not BufferView:
                return _from_vm(result)
            return result.to_numpy() if _owned(result, 3) else result.to_numpy_copy()
        finally:
            release_borrowed(vm_args)

    async def call_async(self, *args: Any, timeout: float | None = None) -> Any:
        """`await fn.call_async(*args)`: `fn(*args)` (same conversions, errors and `timeout`)
        without blocking the event loop. A coarse-fences function is invoked on the loop's
        thread and its signal fence awaited; a synchronous one runs on the loop's default
        executor. Cancelling the await leaves the work to finish in the background and drops
        its results (asyncio_bridge.py)."""
        if self._coarse:
            results = await await_scheduled(
                self.name, timeout,
                lambda signal: self.invoke_async(self._to_vm_args(args), Fence(), signal))
            return self._from_vm_results(results)
        vm_args = self._to_vm_args(args)  # copied now, as `fn(*args)` does, not on the thread
        return await run_in_executor(
            self.name, timeout, lambda: self._from_vm_results(self._invoke(vm_args)))

    def _to_vm_args(self, args: Sequence[Any]) -> list[Any]:
        """Arity checked, arrays copied into fresh device buffers, scalars checked."""
        if len(args) != self._num_user_args:
            self._check_arity(args)
        try:
            return list(self._convert_all(args, self._allocator))
        except InputError as e:
            raise self._which_argument(args, e) from None

    def _from_vm_results(self, results: tuple[Any, ...], owned: bool = False) -> Any:
        """numpy arrays later calls cannot change: views of buffers only this call made and
        nothing else holds when `owned` (the caller's `results` is their only holder), else
        copies; one result as is, several as a tuple, none as None."""
        if self._result_converters:
            results = tuple(convert(r) for convert, r in zip(self._result_converters, results))
        if owned and len(results) > 1:
            buffers = [id(r.buffer) for r in results if type(r) is BufferView]
            owned = len(set(buffers)) == len(buffers)  # else views would alias each other
        if len(results) == 1:
            result = results[0]
            if type(result) is BufferView and owned and _owned(result, 4):
                return result.to_numpy()
            return result.to_numpy_copy() if isinstance(result, BufferView) else result
        if not results:
            return None
        return tuple(r.to_numpy() if owned and type(r) is BufferView and _owned(r, 4)
                     else _from_vm(r) for r in results)

    def _which_argument(self, args: Sequence[Any], error: InputError) -> InputError:
        """A conversion failed: the same error, naming the function and the argument (found
        again on this error path so the conversions themselves stay a plain comprehension)."""
        if str(error).startswith("function '"):
            return error
        for i, (convert, a) in enumerate(zip(self._converters, args)):
            try:
                convert(a, self._allocator)
            except InputError:
                return InputError(f"function '{self.name.split('.', 1)[-1]}': argument {i} "
                                  f"(%input{i}): {error}")
        return error

    def __repr__(self) -> str:
        return f"<weir function {self.name} {self.signature.cconv}>"


Converter = Callable[[Any, Allocator | None], Any]


def _all_converted(converters: tuple[Converter, ...]
                   ) -> Callable[[Sequence[Any], Allocator | None], Sequence[Any]]:
    """Converts a call's arguments (already counted), one converter each. Written out for the
    usual one or two arguments: a comprehension's frame and zip cost a call of a small
    program a few percent."""
    if len(converters) == 1:
        (c0,) = converters
        return lambda args, allocator: (c0(args[0], allocator),)
    if len(converters) == 2:
        c0, c1 = converters
        return lambda args, allocator: (c0(args[0], allocator), c1(args[1], allocator))
    return lambda args, allocator: [c(a, allocator) for c, a in zip(converters, args)]


def _int_to_vm(value: Any, allocator: Allocator | None) -> int:
    if isinstance(value, (bool, float)) or not isinstance(value, (int, np.integer)):
        raise InputError(f"expected an integer argument, got {value!r}")
    return int(value)


def _float_to_vm(value: Any, allocator: Allocator | None) -> float:
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
        raise InputError(f"expected a float argument, got {value!r}")
    return float(value)


# Scalar arguments by letter; `r` arguments convert with `abi_tensors.tensor_argument`.
_CONVERTERS: dict[str, Callable[[Any, Allocator | None], Any]] = {
    "i": _int_to_vm, "I": _int_to_vm, "f": _float_to_vm, "F": _float_to_vm,
}


def _owned(view: BufferView, holders: int) -> bool:
    """Whether `view`'s memory may become the caller's array: a writable buffer over memory of
    its own (not a slab's part, a constant or a borrowed argument), referred to by nothing but
    `view`, which has `holders` references counting getrefcount's argument (the caller's
    names and containers): a global or a custom module keeping it would see the caller's
    changes, and later calls would see them through it."""
    buffer = view.buffer
    return not buffer.read_only and buffer.owns_memory and \
        sys.getrefcount(view) <= holders and sys.getrefcount(buffer) <= 3


def _from_vm(value: Any) -> Any:
    """Buffer views come back as numpy copies, which later calls cannot change."""
    return value.to_numpy_copy() if isinstance(value, BufferView) else value


class Context(_VMContext):
    """A VM context plus the lookups the API offers."""

    def lookup(self, qualified_name: str) -> Function:
        """`module.function`; a plain name is looked up in the last module added."""
        if "." not in qualified_name:
            return self.lookup_function(qualified_name)
        _, export, call = self.lookup_export(qualified_name)
        return Function(self, qualified_name, export, call)

    def lookup_function(self, name: str) -> Function:
        """`name` in the last module added (the program's main module, by convention)."""
        return self.lookup(f"{self.last_module().name}.{name}")


def check_device_count(given: int, modules: Sequence[Any]) -> None:
    """More devices than the modules were compiled for is a mistake (one `--device` too many, or
    a command line meant for another program): an error naming both counts, raised before any
    device is created. Modules written in Python declare no devices, so with one of them loaded
    any count is accepted; so is the one default device of a program that uses none."""
    if any(not isinstance(m, BytecodeModule) for m in modules):
        return
    wanted = max((len(m.image.devices) for m in modules), default=0)
    if given > max(wanted, 1):
        names = sorted({d.name for m in modules for d in m.image.devices})
        raise LoadError(f"{given} devices were given but the modules were compiled for {wanted} "
                        f"({', '.join(names) or 'none'}): pass one --device per device the "
                        "modules use, in order")
