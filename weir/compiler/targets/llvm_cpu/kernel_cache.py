"""Object code of llvm-cpu's microkernels kept on disk between compilations.

Why: the GEMM microkernel's object (every variant of `weir_gemm_*` and the few-rows kernels)
takes LLVM 1.7 s to optimise and emit on an Emerald Rapids core, more than the rest of a small
program's compile, and it is the same for every program compiled for one CPU. IREE ships its
microkernels prebuilt; weir builds each once per machine and keeps it here.

An entry is named by the SHA-256 of everything the object depends on: the LLVM IR text (so any
change to how weir writes the kernel is a new entry), the target CPU and features, and the
LLVM and llvmlite versions. Its file holds a header, the SHA-256 of the object and the object,
so a truncated or damaged file is detected and rebuilt, never linked. Entries are written to a
temporary file and renamed into place, so concurrent compilations never read half an entry.
The cache only ever saves time: a directory that cannot be created, read or written leaves the
compile as it would be without one."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

_HEADER = b"weir-kernel-object 1\n"
_DIGEST_BYTES = 64  # hex SHA-256 of the object, then a newline


def entry_name(parts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        encoded = part.encode()
        digest.update(len(encoded).to_bytes(8, "little"))
        digest.update(encoded)
    return digest.hexdigest() + ".o"


def _read(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(_HEADER) + _DIGEST_BYTES + 1
    if not data.startswith(_HEADER) or len(data) < head:
        return None
    body = data[head:]
    if hashlib.sha256(body).hexdigest().encode() != data[len(_HEADER):head - 1]:
        return None
    return body


def _write(path: Path, body: bytes) -> None:
    data = _HEADER + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        pass  # a full disk or a read-only home: this compile just does not leave an entry


def cached_object(directory: Path | None, parts: Sequence[str],
                  build: Callable[[], bytes]) -> bytes:
    """The object `build()` makes, from the entry `parts` name in `directory` when a sound one
    is there, else built and stored there; `directory` None: built every time."""
    if directory is None:
        return build()
    path = directory / entry_name(parts)
    found = _read(path)
    if found is not None:
        return found
    body = build()
    _write(path, body)
    return body
