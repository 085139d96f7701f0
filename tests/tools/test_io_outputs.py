"""--output routing and npy round trips that keep every dtype."""

from __future__ import annotations

import io
import re

import ml_dtypes
import numpy as np
import pytest

from weir.errors import UsageError
from weir.tools.io.element_types import ELEMENT_TYPES, parse_element_type
from weir.tools.io.npy import FileStreams
from weir.tools.io.outputs import check_output_specs, write_results
from weir.tools.io.values import TypedScalar


# numpy saves the one-byte ml_dtypes types (i2, i4, f8...) as raw `|V1` (f8E5M2 as `<f1`, which
# numpy cannot load): no round trip.
RAW_BYTES = [t for t in ELEMENT_TYPES
             if t.byte_size == 1 and t.kind != "bool" and (t.bits < 8 or t.is_float)]


@pytest.mark.parametrize("etype", [t for t in ELEMENT_TYPES if t not in RAW_BYTES],
                         ids=lambda t: t.name)
def test_npy_round_trip_keeps_the_dtype(tmp_path, etype) -> None:  # type: ignore[no-untyped-def]
    path = str(tmp_path / "r.npy")
    array = np.arange(6).reshape(2, 3).astype(etype.dtype)
    write_results([array], [f"@{path}"], io.StringIO())
    loaded = FileStreams().read_npy(path, append=False)
    assert loaded.dtype == etype.dtype and loaded.shape == (2, 3)
    np.testing.assert_array_equal(loaded.astype(np.float64), array.astype(np.float64))


@pytest.mark.parametrize("etype", RAW_BYTES, ids=lambda t: t.name)
def test_one_byte_ml_dtypes_are_written_raw_and_refused_back(tmp_path, etype) -> None:  # type: ignore[no-untyped-def]
    """An f8/i4 result is written as its bytes; reading such a file back is one error naming the
    ambiguity, since the header (`|V1`) could mean any of them."""
    path = str(tmp_path / "r.npy")
    array = np.arange(6).reshape(2, 3).astype(etype.dtype)
    write_results([array], [f"@{path}"], io.StringIO())
    with open(path, "rb") as f:  # the data is the last 6 bytes, after numpy's header
        raw = f.read()[-6:]
    assert raw == array.tobytes()
    with pytest.raises(UsageError) as error:
        FileStreams().read_npy(path, append=False)
    assert "numpy saves i2, i4, f8E5M2" in str(error.value)
    assert "all as one raw byte, so the file cannot say which" in str(error.value)
    assert "\n" not in str(error.value)


def test_bf16_file_is_readable_by_plain_numpy_with_ml_dtypes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "b.npy"
    write_results([np.array([1.5], ml_dtypes.bfloat16)], [f"@{path}"], io.StringIO())
    assert np.load(path).view(ml_dtypes.bfloat16)[0] == 1.5


def test_overwrite_then_append(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = str(tmp_path / "out.npy")
    i32 = parse_element_type("i32")
    results = [np.ones(2, np.float32), TypedScalar(i32, 7), None]
    write_results(results, [f"@{path}", f"+{path}", f"+{path}"], io.StringIO())
    streams = FileStreams()
    first = streams.read_npy(path, append=False)
    scalar = streams.read_npy(path, append=True)
    null = streams.read_npy(path, append=True)
    np.testing.assert_array_equal(first, [1, 1])
    assert scalar.shape == () and scalar.dtype == np.int32 and scalar == 7
    assert null.shape == (0,) and null.dtype == np.int8
    write_results([np.zeros(1, np.int8)], [f"@{path}"], io.StringIO())  # `@` truncates
    assert len(FileStreams().read_all_npy(path, append=False)) == 1


def test_binary_output(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "out.bin"
    write_results([np.array([1, 2], np.int32)], [f"@{path}"], io.StringIO())
    write_results([np.array([3], np.int32)], [f"+{path}"], io.StringIO())
    assert path.read_bytes() == np.array([1, 2, 3], "<i4").tobytes()


def test_print_and_drop() -> None:
    out = io.StringIO()
    write_results([np.array([1, 2], np.int32), np.zeros(1)], ["-", ""], out)
    assert out.getvalue() == "hal.buffer_view\n2xi32=1 2\n"


def test_count_must_match() -> None:
    with pytest.raises(UsageError, match="2 --output values given but the function returned 1"):
        write_results([np.zeros(1)], ["-", "-"], io.StringIO())


@pytest.mark.parametrize("spec", ["file.npy", "@", "+", "x"])
def test_bad_specs(spec: str) -> None:
    with pytest.raises(UsageError, match=re.escape(f"--output '{spec}'")):
        check_output_specs([spec])


def test_unwritable_path(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match="cannot write"):
        write_results([np.zeros(1)], [f"@{tmp_path}/missing/dir/x.npy"], io.StringIO())
