"""The in-memory form of a module file, shared by the compiler (which builds it) and the runtime
(which loads it). Everything is a frozen dataclass so a verified image cannot drift afterwards.

Value types in signatures use IREE's calling-convention letters so that imports and exports can
be matched by a string compare: `i` i32, `I` i64, `f` f32, `F` f64, `r` a reference (buffer view,
buffer, fence, device, ...). A signature is written `0<args>_<results>` (`0rr_r`), as IREE does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from weir.format.vm_isa import Instruction

ValueType = Literal["i", "I", "f", "F", "r"]
VALUE_TYPES: frozenset[str] = frozenset("iIfFr")

# How a function is called: `sync` takes and returns values; `coarse-fences` additionally takes a
# wait fence and a signal fence as its two trailing arguments and returns once work is scheduled.
CallModel = Literal["sync", "coarse-fences"]
CALL_MODELS: tuple[CallModel, ...] = get_args(CallModel)


@dataclass(frozen=True)
class Signature:
    args: tuple[ValueType, ...]
    results: tuple[ValueType, ...]

    @property
    def cconv(self) -> str:
        return "0" + "".join(self.args) + "_" + "".join(self.results)

    @staticmethod
    def parse(text: str) -> Signature:
        """Inverse of `cconv`; raises ValueError on anything else."""
        if not text.startswith("0") or text.count("_") != 1:
            raise ValueError(f"malformed calling convention '{text}'")
        args, results = text[1:].split("_")
        for ch in args + results:
            if ch not in VALUE_TYPES:
                raise ValueError(f"unknown value type '{ch}' in calling convention '{text}'")
        return Signature(tuple(args), tuple(results))  # type: ignore[arg-type]


@dataclass(frozen=True)
class ImportDef:
    """A function this module calls in another module, named `module.function`."""

    name: str
    signature: Signature
    model: CallModel = "sync"
    # An optional import may be missing at load time; calling it is then an error.
    optional: bool = False

    @property
    def module_name(self) -> str:
        return self.name.split(".", 1)[0]


@dataclass(frozen=True)
class Block:
    """A basic block: `params` are the registers its predecessors' branch arguments land in."""

    params: tuple[int, ...]
    instructions: tuple[Instruction, ...]


@dataclass(frozen=True)
class FunctionDef:
    name: str
    signature: Signature
    # Registers 0..num_registers-1; the arguments arrive in the entry block's params.
    num_registers: int
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class ExportDef:
    """A function callable from outside. `reflection` carries `iree.abi.declaration` and the
    execution model so tools know whether to supply fences."""

    name: str
    function: int  # index into ModuleImage.functions
    model: CallModel = "sync"
    reflection: tuple[tuple[str, str], ...] = ()

    def reflection_dict(self) -> dict[str, str]:
        return dict(self.reflection)


@dataclass(frozen=True)
class GlobalDef:
    """Per-context mutable state; `ref` globals hold executables, buffers, devices."""

    name: str
    type: ValueType
    initial: int | float | None = None


@dataclass(frozen=True)
class RodataDef:
    """Read-only bytes (constants, weights) kept in a segment and mapped, not copied."""

    name: str
    segment: int
    alignment: int = 64


@dataclass(frozen=True)
class ExecutableVariant:
    """One target's translation of an executable: `format` picks the runtime loader
    (`reference`, later `llvm-cpu`, ...), the payload lives in a segment."""

    target: str
    format: str
    segment: int


@dataclass(frozen=True)
class ExecutableDef:
    name: str
    entry_points: tuple[str, ...]
    variants: tuple[ExecutableVariant, ...]


# The name of the one device of a module compiled without named target devices.
DEFAULT_DEVICE_NAME = "__device_0"


@dataclass(frozen=True)
class DeviceDef:
    """A device the module was compiled for, bound in order to the devices the user passes."""

    name: str
    kind: str = "local"


@dataclass(frozen=True)
class ModuleImage:
    name: str
    # Modules that must be loaded into the context before this one (derived from imports).
    dependencies: tuple[str, ...]
    imports: tuple[ImportDef, ...]
    exports: tuple[ExportDef, ...]
    functions: tuple[FunctionDef, ...]
    globals: tuple[GlobalDef, ...] = ()
    rodata: tuple[RodataDef, ...] = ()
    executables: tuple[ExecutableDef, ...] = ()
    devices: tuple[DeviceDef, ...] = (DeviceDef(DEFAULT_DEVICE_NAME),)
    # Name of the function run once when the module is added to a context (creates executables,
    # initialises globals), or None.
    initializer: str | None = None
    # Raw bytes of constants and executable payloads; on load these are views into the file.
    segments: tuple[memoryview, ...] = field(default=(), compare=False)

    def function_index(self, name: str) -> int:
        for i, fn in enumerate(self.functions):
            if fn.name == name:
                return i
        raise KeyError(name)
