"""The VM: translation of hand-built modules, linking, per-context state, native modules and the
end-to-end dispatch path through the `hal` module."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from runtime_builders import S, fn, mul_module

from weir.errors import DeadlineExceeded, InputError, LoadError, ModuleFormatError, RuntimeFault
from weir.format.image import Block, ExportDef, FunctionDef, GlobalDef, ImportDef, ModuleImage
from weir.format.module_file import serialize
from weir.format.vm_isa import (
    Binary,
    Branch,
    Call,
    CondBranch,
    Const,
    Fail,
    GlobalLoad,
    GlobalStore,
    Return,
    Select,
    Unary,
)
from weir.runtime.hal.deadline import deadline
from weir.runtime.api import (
    BufferView,
    BytecodeModule,
    Context,
    Fence,
    Instance,
    NativeModule,
    export,
    load_module_bytes,
)


def _module(name: str, functions: tuple[FunctionDef, ...], exports: tuple[str, ...] = (),
            imports: tuple[ImportDef, ...] = (), **kw: Any) -> BytecodeModule:
    names = [f.name for f in functions]
    return BytecodeModule(ModuleImage(
        name=name, dependencies=tuple(sorted({i.module_name for i in imports} - {"hal"})),
        imports=imports, exports=tuple(ExportDef(e, names.index(e)) for e in exports),
        functions=functions, **kw))


def _context(*modules: Any) -> Context:
    instance = Instance()
    return Context(instance, devices=[instance.create_device("local-sync")], modules=modules)


def test_end_to_end_dispatch_through_hal() -> None:
    ctx = _context(load_module_bytes(serialize(mul_module())))
    run = ctx.lookup("module.mul")
    assert run.signature.cconv == "0rr_r"
    assert run.reflection["iree.abi.declaration"] == "sync func @mul"
    out = run(np.array([1, 2, 3, 4], np.float32), np.array([5, 6, 7, 8], np.float32))
    np.testing.assert_array_equal(out, [5, 12, 21, 32])
    assert ctx.lookup_function("mul") is not None and ctx.lookup("mul").name == "module.mul"


def test_buffer_view_assert_names_the_input() -> None:
    run = _context(BytecodeModule(mul_module())).lookup("mul")
    with pytest.raises(InputError, match=r"argument 1 \(%input1\) expects 4xf32, got 3xf32"):
        run(np.zeros(4, np.float32), np.zeros(3, np.float32))
    with pytest.raises(InputError, match=r"function 'mul' expects 2 argument\(s\), got 1"):
        run(np.zeros(4, np.float32))


def test_invoke_views_is_the_low_level_form() -> None:
    run = _context(BytecodeModule(mul_module())).lookup("mul")
    a = BufferView.from_numpy(np.full(4, 3, np.float32))
    (view,) = run.invoke_views([a, a])
    assert isinstance(view, BufferView) and view.to_numpy().tolist() == [9] * 4


def _sum_below() -> FunctionDef:
    """sum(range(n)) with a loop: blocks with params, a back edge and a conditional exit."""
    return FunctionDef("sum_below", S("0I_I"), 12, (
        Block((0,), (Const(1, 0), Const(2, 0), Branch(1, (1, 2)))),
        Block((3, 4), (Binary(5, "lt", 3, 0), CondBranch(5, 2, (3, 4), 3, (4,)))),
        Block((6, 7), (Binary(8, "add", 7, 6), Const(9, 1), Binary(10, "add", 6, 9),
                       Branch(1, (10, 8)))),
        Block((11,), (Return((11,)),)),
    ))


def test_multi_block_branching_with_block_params() -> None:
    ctx = _context(_module("m", (_sum_below(),), ("sum_below",)))
    f = ctx.lookup("m.sum_below")
    assert f(10) == 45 and f(0) == 0 and f(1000) == 499500


def test_scalar_semantics() -> None:
    ops = ["div", "rem", "add", "mul", "shl", "shr", "min", "max", "eq", "ge"]
    body: list[Any] = [Binary(2 + i, op, 0, 1) for i, op in enumerate(ops)]
    body += [Unary(12, "neg", 0), Unary(13, "not", 1), Select(14, 8, 0, 1),
             Return(tuple(range(2, 15)))]
    f = fn("ops", "0II_" + "I" * 13, 15, (0, 1), body)
    run = _context(_module("m", (f,), ("ops",))).lookup("ops")
    assert run(-7, 2) == (-3, -1, -5, -14, -28, -2, -7, 2, 0, 0, 7, 0, -7)
    big = 2**63 - 1
    div, rem, add, mul, *_ = run(big, 2)
    assert add == -(2**63) + 1 and mul == -2  # i64 wraparound
    with pytest.raises(RuntimeFault, match="integer division by zero"):
        run(1, 0)


def test_float_ops_and_conversion() -> None:
    f = fn("f", "0FF_FFI", 6, (0, 1), [Binary(2, "div", 0, 1), Binary(3, "mul", 0, 1),
                                        Unary(4, "to_int", 2), Unary(5, "to_float", 4),
                                        Return((2, 5, 4))])
    run = _context(_module("m", (f,), ("f",))).lookup("f")
    assert run(7.0, -2.0) == (-3.5, -3.0, -3)


def test_fail_raises_a_runtime_fault_with_the_message() -> None:
    f = fn("boom", "0_", 1, (), [Const(0, "shape check failed"), Fail(0)])
    with pytest.raises(RuntimeFault, match="^shape check failed$"):
        _context(_module("m", (f,), ("boom",))).lookup("boom")()


def test_fail_with_values_names_them_after_the_message() -> None:
    # Through the module file, so the values survive serialisation and verification too.
    f = fn("sizes", "0II_", 3, (0, 1), [Const(2, "sizes differ"), Fail(2, (0, 1))])
    image = ModuleImage(name="m", dependencies=(), imports=(), exports=(ExportDef("sizes", 0),),
                        functions=(f,))
    run = _context(load_module_bytes(serialize(image))).lookup("m.sizes")
    with pytest.raises(RuntimeFault, match="^sizes differ: 5 vs 4$"):
        run(5, 4)


def _counter_module() -> BytecodeModule:
    bump = fn("bump", "0_I", 3, (), [GlobalLoad(0, 0), Const(1, 1), Binary(2, "add", 0, 1),
                                      GlobalStore(0, 2), Return((2,))])
    init = fn("init", "0_", 1, (), [Const(0, 100), GlobalStore(0, 0), Return(())])
    return _module("counter", (bump, init), ("bump",), globals=(GlobalDef("n", "I", 0),),
                   initializer="init")


def test_globals_are_per_context_and_the_initializer_runs() -> None:
    module = _counter_module()
    a, b = _context(module).lookup("bump"), _context(module).lookup("bump")
    assert (a(), a(), b()) == (101, 102, 101)


def _module_a() -> BytecodeModule:
    double = fn("double", "0I_I", 2, (0,), [Binary(1, "add", 0, 0), Return((1,))])
    return _module("module_a", (double,), ("double",))


def _pipeline(signature: str = "0I_I", name: str = "module_a.double") -> BytecodeModule:
    quad = fn("quad", "0I_I", 3, (0,), [Call((1,), name, (0,)), Call((2,), name, (1,)),
                                         Return((2,))])
    return _module("pipeline", (quad,), ("quad",), imports=(ImportDef(name, S(signature)),))


def test_two_modules_one_importing_the_other() -> None:
    ctx = _context(_module_a(), _pipeline())
    assert ctx.lookup("pipeline.quad")(5) == 20
    assert ctx.lookup("quad")(1) == 4


def test_missing_module() -> None:
    with pytest.raises(LoadError, match=r"^module 'pipeline' needs module 'module_a' \(for import "
                                        r"'module_a.double'\), which is not loaded: pass it with "
                                        r"--module before 'pipeline'$"):
        _context(BytecodeModule(dataclass_no_deps(_pipeline())))
    with pytest.raises(LoadError, match="depends on module 'module_a', which is not loaded"):
        _context(_pipeline())


def dataclass_no_deps(module: BytecodeModule) -> ModuleImage:
    import dataclasses
    return dataclasses.replace(module.image, dependencies=())


def test_missing_function() -> None:
    with pytest.raises(LoadError, match="module 'pipeline' imports 'module_a.triple', but module "
                                        "'module_a' has no function 'triple'"):
        _context(_module_a(), _pipeline(name="module_a.triple"))


def test_signature_mismatch() -> None:
    # (0I_r keeps the importer's own registers consistent: an `r` result may hold an integer.)
    with pytest.raises(LoadError, match="imports 'module_a.double' with signature 0I_r, but the "
                                        "function has signature 0I_I"):
        _context(_module_a(), _pipeline(signature="0I_r"))


def test_hal_imports_are_checked_by_arity() -> None:
    f = fn("f", "0_", 1, (), [Return(())])
    bad = _module("m", (f,), ("f",), imports=(ImportDef("hal.fence.await", S("0r_")),))
    with pytest.raises(LoadError, match="takes 2 argument"):
        _context(bad)


class Custom(NativeModule):
    module_name = "custom"

    def create_state(self, context: Any) -> dict[str, int]:
        return {"calls": 0}

    @export("0rr_r")
    def mul(self, state: dict[str, int], a: BufferView, b: BufferView) -> BufferView:
        state["calls"] += 1
        return BufferView.from_numpy(a.to_numpy() * b.to_numpy())

    @export("0_I")
    def calls(self, state: dict[str, int]) -> int:
        return state["calls"]

    @export("0_")
    def boom(self, state: dict[str, int]) -> None:
        raise ValueError("kaput")

    @export("0rrr_r", model="coarse-fences")
    def async_neg(self, state: dict[str, int], a: BufferView, wait: Fence, signal: Fence) -> BufferView:
        assert wait.wait(0)
        out = BufferView.from_numpy(-a.to_numpy())
        signal.signal()
        return out


def test_native_module_called_from_bytecode() -> None:
    caller = fn("run", "0rr_r", 3, (0, 1), [Call((2,), "custom.mul", (0, 1)), Return((2,))])
    pipeline = _module("pipeline", (caller,), ("run",),
                       imports=(ImportDef("custom.mul", S("0rr_r")),))
    ctx = _context(Custom(), pipeline)
    out = ctx.lookup("run")(np.array([1, 2], np.int32), np.array([3, 4], np.int32))
    assert out.tolist() == [3, 8] and ctx.lookup("custom.calls")() == 1


def test_native_errors_become_runtime_faults_naming_the_function() -> None:
    with pytest.raises(RuntimeFault, match="^custom.boom: ValueError: kaput$"):
        _context(Custom()).lookup("custom.boom")()


def test_coarse_fences_function_gets_fences_from_the_api() -> None:
    f = _context(Custom()).lookup("custom.async_neg")
    assert f.model == "coarse-fences" and f.num_user_args == 1
    assert f(np.array([1.5], np.float32)).tolist() == [-1.5]


def test_duplicate_module_names_are_rejected() -> None:
    with pytest.raises(LoadError, match="a module named 'module_a' is already loaded"):
        _context(_module_a(), _module_a())


def test_generated_code_is_plain_python() -> None:
    src = _module("m", (_sum_below(),), ("sum_below",)).translated.source
    assert "while True:" in src and "if blk == 3:" in src
    src = BytecodeModule(mul_module()).translated.source
    assert "while True" not in src and "'" not in src  # strings come from the constant table


# Regressions found by the module fuzzer (tests/reliability): register dataflow the verifier
# now proves, and loops that a deadline ends.


def _one(blocks: tuple[Block, ...], cconv: str = "0I_I", nreg: int = 4) -> ModuleImage:
    return ModuleImage("m", (), (), (ExportDef("f", 0),), (FunctionDef("f", S(cconv), nreg,
                                                                       blocks),), devices=())


@pytest.mark.parametrize("blocks, message", [
    # A register read on a path that never wrote it (it is written in one branch only).
    ((Block((0,), (Const(1, 1), CondBranch(0, 1, (), 2, ()))),
      Block((), (Const(2, 5), Branch(2))),
      Block((), (Return((2,)),))), "block 2 instruction 0: reads register 2 before it is written"),
    # A damaged destination overwriting a value another instruction defined.
    ((Block((0,), (Const(1, 1), Binary(1, "add", 0, 0), Return((1,)))),),
     "writes register 1, already written by block 0 instruction 0"),
    # A float where the signature promises an integer.
    ((Block((0,), (Const(1, 1.5), Return((1,)))),), "result 0 must be an integer, register 1 "
                                                    "holds a float"),
    ((Block((0,), (Const(1, "x"), Binary(2, "add", 0, 1), Return((2,)))),),
     "the right operand must be a number, register 1 holds a string constant"),
    ((Block((0,), (Const(1, 1), Const(2, 2.0), Select(3, 0, 1, 2), Return((3,)))),),
     "select of values of two kinds"),
])
def test_register_dataflow_is_verified(blocks: tuple[Block, ...], message: str) -> None:
    with pytest.raises(ModuleFormatError, match=message):
        BytecodeModule(_one(blocks))


def test_only_back_edges_count_down_to_a_deadline_check() -> None:
    """Every loop has a branch to the same or an earlier block; only those pay for the check."""
    function = _sum_below()
    back_edges = 0
    for b, block in enumerate(function.blocks):
        last = block.instructions[-1]
        targets = (last.block,) if isinstance(last, Branch) else \
            (last.true_block, last.false_block) if isinstance(last, CondBranch) else ()
        back_edges += sum(1 for t in targets if t <= b)
    src = _module("m", (function,), ("sum_below",)).translated.source
    assert src.count("if not tick: tick = H_tick(0)") == back_edges > 0
    assert "tick" not in BytecodeModule(mul_module()).translated.source


def test_an_endless_host_loop_ends_at_the_callers_deadline() -> None:
    spin = (Block((0,), (Branch(1, (0,)),)), Block((1,), (Branch(1, (1,)),)))
    instance = Instance()
    run = Context(instance, modules=[BytecodeModule(_one(spin, "0I_", 2))]).lookup("m.f")
    with deadline(0.0, "spin"), pytest.raises(DeadlineExceeded,
                                              match=r"^spin \(timeout 0 s\): deadline exceeded "
                                                    r"while running function 'f' of module 'm'$"):
        run(1)


def test_a_result_the_verifier_cannot_type_is_checked_on_return() -> None:
    """An `r` value (any value at run time) returned where the signature promises i64: the
    translator checks it, so the API never converts a buffer as if it were an integer."""
    passthrough = (Block((0,), (Return((0,)),)),)
    instance = Instance()
    f = Context(instance, modules=[BytecodeModule(_one(passthrough, "0r_I", 1))]).lookup("m.f")
    assert f(7) == 7
    with pytest.raises(RuntimeFault, match="function 'f' of module 'm': result 0 must be an "
                                           "integer, got BufferView"):
        f(np.zeros(2))
    assert "H_int" not in BytecodeModule(_one((Block((0,), (Return((0,)),)),), "0I_I", 1)) \
        .translated.source
