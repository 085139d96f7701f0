"""What every frontend does once it has MLIR text: check the target, keep the text where the
caller asked (so a compile error's file:line means something), compile it with weir."""

from __future__ import annotations

from pathlib import Path
from typing import Self

import weir.api as weir
from weir.errors import CompileError, UsageError

TARGETS = ("llvm-cpu", "reference", "vmvx")


def check_target(target: str) -> None:
    if target not in TARGETS:
        raise UsageError(f"target: '{target}' is not one of {', '.join(TARGETS)}")


def compile_mlir(mlir: str, name: str, *, target: str, strip_assertions: bool,
                 keep_mlir: str | Path | None, produced: str) -> bytes:
    """`mlir` (the frontend's output, `produced` saying how: "exported", "imported") compiled
    for `target`. Without `keep_mlir`, a compile error's location names a file that does not
    exist: the message then says how to get it."""
    filename = f"{name}.mlir"
    if keep_mlir is not None:
        Path(keep_mlir).write_text(mlir)
        filename = str(keep_mlir)
    options = weir.CompilerOptions(target_backends=(target,), strip_assertions=strip_assertions)
    try:
        return weir.compile_string(mlir, filename, options)
    except CompileError as error:
        if keep_mlir is not None:
            raise
        raise CompileError(error.message + f" (compile(..., keep_mlir='model.mlir') writes the "
                           f"{produced} MLIR this location refers to)", error.filename,
                           error.line, error.col) from None


class LoadedModel:
    """A compiled model's module loaded on a device, its function `main` looked up; owns the
    device: `close()` it (or use `with`) to end a local-task device's threads. Each frontend
    adds how its values go in and out."""

    def __init__(self, module: bytes, device: str, mlir: str) -> None:
        self.module = module
        self.mlir = mlir
        self.context = weir.load([module], device=device)
        self.function = self.context.lookup_function("main")

    def close(self) -> None:
        self.context.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
