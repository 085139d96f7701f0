"""Hand-built module images and kernels for the runtime tests: exactly what the compiler emits,
without depending on the compiler."""

from __future__ import annotations

from weir.format.image import (
    Block,
    ExecutableDef,
    ExecutableVariant,
    ExportDef,
    FunctionDef,
    GlobalDef,
    ImportDef,
    ModuleImage,
    Signature,
)
from weir.format.kernel_codec import encode_reference_executable
from weir.format.kernel_description import (
    Empty,
    EntryPoint,
    Generic,
    Load,
    ReferenceExecutable,
    ScalarOp,
    Store,
)
from weir.format.vm_isa import Call, Const, GlobalLoad, GlobalStore, Instruction, Return

S = Signature.parse

HAL_IMPORTS = {
    "hal.device.get": "0i_r",
    "hal.buffer_view.assert": "0rrrr_",
    "hal.buffer_view.buffer": "0r_r",
    "hal.buffer_view.create": "0rIrr_r",
    "hal.allocator.allocate": "0rI_r",
    "hal.executable.create": "0rr_r",
    "hal.command_buffer.create": "0r_r",
    "hal.command_buffer.dispatch": "0rrirrr_",
    "hal.command_buffer.finalize": "0r_",
    "hal.fence.create": "0r_r",
    "hal.device.queue.execute": "0rrrr_",
    "hal.fence.await": "0Ir_",
}


def mul_kernel() -> bytes:
    """out[i] = a[i] * b[i] over 4xf32."""
    entry = EntryPoint("mul_dispatch_0", 3, 0, (
        Load(0, "f32", (4,)),
        Load(1, "f32", (4,)),
        Empty("f32", (4,)),
        Generic((0, 1), (2,), ((0,), (0,), (0,)), ("parallel",),
                (ScalarOp("mulf", (0, 1), "f32"),), (3,)),
        Store(3, 2),
    ))
    return encode_reference_executable(ReferenceExecutable((entry,)))


def hal_imports() -> tuple[ImportDef, ...]:
    return tuple(ImportDef(name, S(cconv)) for name, cconv in HAL_IMPORTS.items())


def fn(name: str, cconv: str, nreg: int, params: tuple[int, ...],
       body: list[Instruction]) -> FunctionDef:
    return FunctionDef(name, S(cconv), nreg, (Block(params, tuple(body)),))


def mul_module(name: str = "module") -> ModuleImage:
    """A dispatch of mul_kernel, as the compiler's vm phase emits it."""
    init = fn("__init", "0_", 4, (), [
        Const(0, 0),
        Call((1,), "hal.device.get", (0,)),
        Const(2, "mul_dispatch_0"),
        Call((3,), "hal.executable.create", (1, 2)),
        GlobalStore(0, 3),
        Return(()),
    ])
    body: list[Instruction] = [
        Const(2, "input0"), Const(3, "f32"), Const(4, 4),
        Call((), "hal.buffer_view.assert", (0, 2, 3, (4,))),
        Const(20, "input1"),
        Call((), "hal.buffer_view.assert", (1, 20, 3, (4,))),
        Const(5, 0), Call((6,), "hal.device.get", (5,)),
        Call((7,), "hal.buffer_view.buffer", (0,)),
        Call((8,), "hal.buffer_view.buffer", (1,)),
        Const(9, 16), Call((10,), "hal.allocator.allocate", (6, 9)),
        Call((11,), "hal.command_buffer.create", (6,)),
        GlobalLoad(12, 0),
        Const(13, 0), Const(14, 1),
        Call((), "hal.command_buffer.dispatch", (11, 12, 13, (14, 14, 14), (), (7, 8, 10))),
        Call((), "hal.command_buffer.finalize", (11,)),
        Call((15,), "hal.fence.create", (6,)),
        Const(16, None),
        Call((), "hal.device.queue.execute", (6, 16, 15, (11,))),
        Const(17, -1),
        Call((), "hal.fence.await", (17, (15,))),
        Const(18, 0),
        Call((19,), "hal.buffer_view.create", (10, 18, 3, (4,))),
        Return((19,)),
    ]
    main = fn("mul", "0rr_r", 21, (0, 1), body)
    return ModuleImage(
        name=name,
        dependencies=(),
        imports=hal_imports(),
        exports=(ExportDef("mul", 1, reflection=(("iree.abi.declaration", "sync func @mul"),)),),
        functions=(init, main),
        globals=(GlobalDef("__executable_mul", "r"),),
        executables=(ExecutableDef("mul_dispatch_0", ("mul_dispatch_0",),
                                   (ExecutableVariant("vmvx", "reference", 0),)),),
        initializer="__init",
        segments=(memoryview(mul_kernel()),),
    )
