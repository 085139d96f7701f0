"""Constants (rodata) are mapped, never copied per call: from the module file's mmap through the
VM's rodata register and `hal.allocator.import_rodata` to the buffer view a function returns,
the bytes stay the file's own, read-only (a module given as bytes off a 64-byte boundary: one
aligned copy made at load)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from runtime_builders import fn

from weir.format.image import ExportDef, ImportDef, ModuleImage, RodataDef, Signature
from weir.format.module_file import serialize
from weir.format.vm_isa import Call, Const, Return, Rodata
from weir.runtime.api import Context, Instance, load_module_bytes, load_module_file

N = 1024 * 1024  # 4 MiB of f32: a weight


def _weights_module(weights: np.ndarray) -> ModuleImage:
    """Two exports returning views of the same rodata, as a program that reads one weight in two
    functions is compiled: one segment, two rodata loads."""
    body = [
        Const(0, 0), Call((1,), "hal.device.get", (0,)),
        Rodata(2, 0), Call((3,), "hal.allocator.import_rodata", (1, 2)),
        Const(4, 0), Const(5, "f32"), Const(6, weights.size),
        Call((7,), "hal.buffer_view.create", (3, 4, 5, (6,))),
        Return((7,)),
    ]
    imports = {"hal.device.get": "0i_r", "hal.allocator.import_rodata": "0rr_r",
               "hal.buffer_view.create": "0rIrr_r"}
    return ModuleImage(
        name="weights", dependencies=(),
        imports=tuple(ImportDef(n, Signature.parse(c)) for n, c in imports.items()),
        exports=(ExportDef("first", 0), ExportDef("second", 1)),
        functions=(fn("first", "0_r", 8, (), body), fn("second", "0_r", 8, (), body)),
        rodata=(RodataDef("weights", 0),),
        segments=(memoryview(weights.tobytes()),),
    )


def _call(context: Context, name: str) -> np.ndarray:
    (view,) = context.lookup(f"weights.{name}").invoke_views([])
    return view.to_numpy()  # type: ignore[no-any-return]


def test_a_weight_used_twice_is_stored_once_and_mapped_from_the_file(tmp_path: Path) -> None:
    weights = np.linspace(-1, 1, N, dtype=np.float32)
    path = tmp_path / "weights.wvm"
    path.write_bytes(serialize(_weights_module(weights)))
    assert weights.nbytes < path.stat().st_size < weights.nbytes + 64 * 1024
    module = load_module_file(path)
    (segment,) = module.image.segments
    assert type(segment.obj).__name__ == "mmap"
    file_bytes = np.frombuffer(segment.obj, np.uint8)  # the whole mapped file
    instance = Instance()
    context = Context(instance, devices=[instance.create_device("local-sync")], modules=[module])
    first, second = _call(context, "first"), _call(context, "second")
    np.testing.assert_array_equal(first, weights)
    for array in (first, second):
        assert np.shares_memory(array, file_bytes)  # a view on the mapping: no copy
        assert not array.flags.writeable and not array.flags.owndata
    assert first.__array_interface__["data"][0] == second.__array_interface__["data"][0]


def _placed(data: bytes, misalignment: int) -> np.ndarray:
    """`data` in memory that starts `misalignment` bytes past a 64-byte boundary."""
    room = np.zeros(len(data) + 128, np.uint8)
    start = -room.ctypes.data % 64 + misalignment
    room[start:start + len(data)] = np.frombuffer(data, np.uint8)
    return room[start:start + len(data)]


@pytest.mark.parametrize("misalignment", [0, 16], ids=["aligned", "off-boundary"])
def test_constants_of_a_module_loaded_from_bytes(misalignment: int) -> None:
    """Views on those bytes where they lie on a 64-byte boundary; otherwise on one copy of the
    segment area that does (module_file._aligned_area), made once at load."""
    weights = np.arange(16, dtype=np.float32)
    data = _placed(serialize(_weights_module(weights)), misalignment)
    module = load_module_bytes(memoryview(data))
    instance = Instance()
    context = Context(instance, devices=[instance.create_device("local-task")], modules=[module])
    result = _call(context, "first")
    again = _call(context, "first")
    np.testing.assert_array_equal(result, weights)
    assert np.shares_memory(result, data) == (misalignment == 0)
    assert result.__array_interface__["data"][0] % 64 == 0
    assert np.shares_memory(result, again)  # one copy at load, not one per call
    assert not result.flags.writeable
