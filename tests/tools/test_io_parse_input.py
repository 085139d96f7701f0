"""--input parsing: every form IREE's tools accept, every element type, and the errors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from weir.errors import UsageError
from weir.tools.io.npy import host_order
from weir.tools.io.parse_input import parse_input, parse_inputs, parse_shape_and_type
from weir.tools.io.values import NullInput, ScalarInput, TensorInput


def tensor(spec: str) -> np.ndarray:
    (value,) = parse_input(spec)
    assert isinstance(value, TensorInput)
    return value.array


def test_splat_fills_the_shape() -> None:
    array = tensor("4096xf32=-2.0")
    assert array.shape == (4096,) and array.dtype == np.float32
    assert np.all(array == -2.0)


@pytest.mark.parametrize("spec", [
    "2x2xi32=[1 2][3 4]", "2x2xi32=[[1 2][3 4]]", "2x2xi32=1,2,3,4", "2x2xi32=1 2 3 4",
    "2x2xi32=[1, 2], [3, 4]", "  2x2xi32 = 1\t2\n3 4  ",
])
def test_separators(spec: str) -> None:
    np.testing.assert_array_equal(tensor(spec), np.array([[1, 2], [3, 4]], np.int32))


def test_no_contents_gives_zeros() -> None:
    array = tensor("2x3xf32")
    assert array.shape == (2, 3) and not array.any()
    assert tensor("2x3xf32=").shape == (2, 3)


def test_zero_d_tensor_and_empty_dims() -> None:
    array = tensor("f32=2.5")
    assert array.shape == () and array.dtype == np.float32 and array == 2.5
    assert tensor("0x4xf32").shape == (0, 4)


def test_bare_scalars_stay_text_until_the_signature_types_them() -> None:
    assert parse_input("5") == [ScalarInput("5", "5")]
    assert parse_input("2.5") == [ScalarInput("2.5", "2.5")]
    assert parse_input("-0x10") == [ScalarInput("-0x10", "-0x10")]


def test_typed_scalars_are_zero_d_tensors() -> None:
    array = tensor("i64=5")
    assert array.shape == () and array.dtype == np.int64 and array == 5
    assert tensor("f64=2.5").dtype == np.float64


@pytest.mark.parametrize("spec", ["(null)", "(ignored)"])
def test_null(spec: str) -> None:
    assert parse_input(spec) == [NullInput(spec)]


@pytest.mark.parametrize("name,dtype,text,expected", [
    ("i8", np.int8, "-128 127 255", [-128, 127, -1]),
    ("i16", np.int16, "-32768 65535", [-32768, -1]),
    ("i32", np.int32, "-2147483648 0x7fffffff", [-2147483648, 2147483647]),
    ("i64", np.int64, "-9223372036854775808 9223372036854775807",
     [-9223372036854775808, 9223372036854775807]),
    ("ui8", np.uint8, "0 255", [0, 255]),
    ("ui16", np.uint16, "65535 1", [65535, 1]),
    ("ui32", np.uint32, "4294967295 1", [4294967295, 1]),
    ("ui64", np.uint64, "18446744073709551615 1", [18446744073709551615, 1]),
    ("f16", np.float16, "0.5 -2", [0.5, -2]),
    ("f32", np.float32, "1e3 -inf", [1000, -np.inf]),
    ("f64", np.float64, "0.1 0x1p-2", [0.1, 0.25]),
])
def test_element_types(name: str, dtype: type, text: str, expected: list[float]) -> None:
    array = tensor(f"2x{name}={text}" if len(text.split()) == 2 else f"3x{name}={text}")
    assert array.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(array, np.array(expected, dtype=dtype))


def test_i1_spellings() -> None:
    np.testing.assert_array_equal(tensor("6xi1=true false 1 0 01 00"),
                                  [True, False, True, False, True, False])


def test_bf16_rounds_through_f32() -> None:
    array = tensor("2xbf16=1.5 0.1")
    assert array.dtype == np.dtype(ml_dtypes.bfloat16)
    assert array[0] == 1.5 and array[1] == ml_dtypes.bfloat16(0.1)


def test_f32_nan_and_overflow() -> None:
    array = tensor("3xf32=nan 1e40 -1e40")
    assert np.isnan(array[0]) and array[1] == np.inf and array[2] == -np.inf


def test_npy_forms(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "in.npy"
    with open(path, "wb") as f:
        np.save(f, np.arange(3, dtype=np.int32))
        np.save(f, np.ones((2, 2), np.float64))
        np.save(f, np.array([1.5], ml_dtypes.bfloat16))
    values = parse_inputs([f"@{path}", f"+{path}", f"+{path}", f"@{path}"])
    arrays = [v.array for v in values if isinstance(v, TensorInput)]
    np.testing.assert_array_equal(arrays[0], [0, 1, 2])
    assert arrays[1].shape == (2, 2) and arrays[1].dtype == np.float64
    assert arrays[2].dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(arrays[3], [0, 1, 2])  # `@` starts over
    assert len(parse_inputs([f"@{path}", f"*{path}"])) == 3  # `*` reads the rest
    assert len(parse_input(f"*{path}")) == 3


def test_plus_opens_a_file_not_read_yet(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "a.npy"
    np.save(path, np.arange(2, dtype=np.int64))
    (value,) = parse_input(f"+{path}")
    assert isinstance(value, TensorInput) and value.array.dtype == np.int64


def test_raw_binary_with_metadata(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "raw.bin"
    path.write_bytes(np.arange(6, dtype="<i4").tobytes())
    values = parse_inputs([f"2xi32=@{path}", f"4xi32=+{path}"])
    arrays = [v.array for v in values if isinstance(v, TensorInput)]
    np.testing.assert_array_equal(arrays[0], [0, 1])
    np.testing.assert_array_equal(arrays[1], [2, 3, 4, 5])
    with pytest.raises(UsageError, match="has 0 bytes left"):
        parse_inputs([f"6xi32=@{path}", f"1xi32=+{path}"])


def test_fortran_order_and_big_endian_npy_are_read_as_they_lie(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A view on the mapped file, not a copy: the function it goes to checks it first, and its
    one copy into a device buffer puts it in the host's order (`host_order` does the same for
    an expected output)."""
    path = tmp_path / "f.npy"
    np.save(path, np.asfortranarray(np.arange(6, dtype=">f4").reshape(2, 3)))
    array = tensor(f"@{path}")
    assert array.dtype == np.dtype(">f4") and not array.flags.owndata
    np.testing.assert_array_equal(array, np.arange(6).reshape(2, 3))
    native = host_order(array)
    assert native.dtype == np.float32 and native.dtype.isnative and native.flags.c_contiguous
    np.testing.assert_array_equal(native, np.arange(6).reshape(2, 3))
    assert host_order(native) is native


def test_a_splat_is_a_view_of_one_element() -> None:
    array = tensor("1073741824xf32=2.5")
    assert array.shape == (1 << 30,) and array.strides == (0,) and array[-1] == 2.5


def test_shape_and_type() -> None:
    from weir.tools.io.element_types import parse_element_type
    assert parse_shape_and_type("4x2xf32") == (parse_element_type("f32"), (4, 2))
    assert parse_shape_and_type("si8") == (parse_element_type("i8"), ())


@pytest.mark.parametrize("spec,message", [
    ("4xf32=1,2,3", r"--input '4xf32=1,2,3': 3 values given for 4xf32 \(4 elements\)"),
    ("2x2xi32=1 2 3 4 5", "5 values given for 2x2xi32"),
    ("", "no value given"),
    ("abc", "'abc' is neither a number nor a tensor"),
    ("4xq32=1", "unknown element type 'q32'"),
    ("?x4xf32=1", "shape dimension 0 '\\?'"),
    ("-1x4xf32", "shape dimension 0 '-1'"),
    ("=1", "missing shape and element type"),
    ("4xi8=300", "300 is out of range for i8"),
    ("2xui8=-1 2", "-1 is out of range for ui8"),
    ("2xi32=1.5 2", "'1.5' is not an integer"),
    ("2xf32=a b", "'a' is not a number"),
    ("2xi1=2 1", "'2' is not an i1 value"),
    ("@x.bin", "only numpy \\(.npy\\) files"),
    ("@/nonexistent/x.npy", "cannot read '/nonexistent/x.npy'"),
    ("&4xf32", "not supported"),
    ("4xf32=1_0", "'1_0' is not a number"),
])
def test_errors_name_the_flag_value(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as info:
        parse_input(spec)
    assert str(info.value).startswith(f"--input '{spec}'")


def test_errors_use_the_given_flag_name() -> None:
    with pytest.raises(UsageError, match="^--expected_output '4xf32=1,2': "):
        parse_input("4xf32=1,2", flag="--expected_output")


def test_npy_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"not numpy at all")
    with pytest.raises(UsageError, match="not a numpy .npy array"):
        parse_input(f"@{bad}")
    one = tmp_path / "one.npy"
    np.save(one, np.zeros(2))
    with pytest.raises(UsageError, match=r"has no more arrays \(read 1\)"):
        parse_inputs([f"@{one}", f"+{one}"])
    obj = tmp_path / "obj.npy"
    np.save(obj, np.array(["a", "b"]))
    with pytest.raises(UsageError, match="not supported"):
        parse_input(f"@{obj}")
