"""Gathers (tensor.extract at computed indices inside a linalg.generic, as torch-mlir exports
embeddings, index_select and gather) and cf.assert kept in linalg bodies, compiled and run on
both host targets and both local drivers. An index out of range, or an assert that does not
hold, fails the call with the op's location and message, and the same context runs the next
call. The programs in torch_exports/ were exported by weir.frontends.torch.export."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

import weir.api as weir
from weir.errors import RuntimeFault
from weir.runtime.api import BufferView, Fence

DONE_S = 10.0  # bound for work the test has released; reached in milliseconds in practice
EXPORTS = Path(__file__).parent / "torch_exports"
TARGETS = ("reference", "llvm-cpu")
DRIVERS = ("local-sync", "local-task")
RNG = np.random.default_rng(5)
Load = Callable[..., Callable[..., object]]

_compiled: dict[tuple[str, str, str, bool], bytes] = {}


@pytest.fixture(params=[(t, d) for t in TARGETS for d in DRIVERS], ids=lambda p: f"{p[0]}-{p[1]}")
def load(request: pytest.FixtureRequest) -> Iterator[Load]:
    """load(source, name, function, strip=False): the function, compiled for the target (with
    --iree-opt-strip-assertions when `strip`) and loaded on the driver in one context."""
    target, driver = request.param
    contexts: list[weir.Context] = []

    def load_function(source: str, name: str, function: str = "main",
                      strip: bool = False) -> Callable[..., object]:
        key = (source, name, target, strip)
        if key not in _compiled:
            options = weir.CompilerOptions(target_backends=(target,), strip_assertions=strip)
            _compiled[key] = weir.compile_string(source, name, options)
        contexts.append(weir.load([_compiled[key]], device=driver))
        return contexts[-1].lookup_function(function)
    yield load_function
    for ctx in contexts:
        ctx.close()


def _export(name: str) -> str:
    return (EXPORTS / f"{name}.mlir").read_text()


def _line_of(source: str, text: str) -> int:
    """The 1-based line of the first line of `source` that contains `text`."""
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _embedding_table(source: str) -> np.ndarray:
    """The weights of the exported embedding: its dense_resource blob (a 4-byte alignment
    header, then little-endian f32s)."""
    blob = source.split('torch_tensor_10_4_torch.float32: "0x')[1].split('"')[0]
    return np.frombuffer(bytes.fromhex(blob)[4:], dtype="<f4").reshape(10, 4)


def _floats(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# -------------------------------------------------------------------------- exported programs


def test_embedding_with_its_index_asserts_kept(load: Load) -> None:
    src = _export("embedding")
    table = _embedding_table(src)
    main = load(src, "embedding.mlir")
    ids = np.array([[3, 0, 9], [9, 9, 1]])
    np.testing.assert_array_equal(main(ids), table[ids])
    line = _line_of(src, "index must be smaller than dim size")
    with pytest.raises(RuntimeFault, match=rf"failed: cf\.assert at embedding\.mlir:{line}:7 "
                                           r"failed: index must be smaller than dim size$"):
        main(np.array([[3, 10, 9], [0, 0, 0]]))
    line = _line_of(src, "index must be larger or equal to 0")
    with pytest.raises(RuntimeFault, match=rf"cf\.assert at embedding\.mlir:{line}:7 failed: "
                                           r"index must be larger or equal to 0$"):
        main(np.array([[3, 1, 9], [0, -2, 0]]))
    np.testing.assert_array_equal(main(ids[::-1].copy()), table[ids[::-1]])


def test_embedding_with_asserts_stripped_checks_its_index(load: Load) -> None:
    src = _export("embedding")
    table = _embedding_table(src)
    main = load(src, "embedding.mlir", strip=True)
    line = _line_of(src, "tensor.extract")
    for bad in (10, -1, 1 << 40):
        with pytest.raises(RuntimeFault, match=rf"tensor\.extract at embedding\.mlir:{line}:7: "
                                               rf"index {bad} is out of range for dimension 0 "
                                               r"of size 10$"):
            main(np.array([[3, 1, 9], [0, bad, 0]]))
    ids = np.array([[5, 5, 2], [7, 8, 4]])
    np.testing.assert_array_equal(main(ids), table[ids])


def test_index_select_along_the_inner_axis(load: Load) -> None:
    src = _export("index_select")
    main = load(src, "index_select.mlir")
    t = _floats(3, 5)
    i = np.array([4, 0, 2, 2])
    np.testing.assert_array_equal(main(t, i), t[:, i])
    line = _line_of(src, "tensor.extract")
    with pytest.raises(RuntimeFault, match=rf"tensor\.extract at index_select\.mlir:{line}:7: "
                                           r"index 5 is out of range for dimension 1 of size 5"):
        main(t, np.array([4, 5, 0, 0]))
    np.testing.assert_array_equal(main(t, i[::-1].copy()), t[:, i[::-1]])


@pytest.mark.parametrize("axis", [0, 1])
def test_gather_along_each_axis(load: Load, axis: int) -> None:
    main = load(_export(f"gather{axis}"), f"gather{axis}.mlir")
    t = _floats(3, 4)
    i = np.array([[0, 1, 2, 0], [2, 2, 1, 0]]) if axis == 0 else np.array([[0, 3], [1, 1], [2, 0]])
    np.testing.assert_array_equal(main(t, i), np.take_along_axis(t, i, axis))


# ----------------------------------------------------------------------- hand-written programs

GATHER_DYNAMIC = """
func.func @f(%t: tensor<?x?xi32>, %i: tensor<?xi32>) -> tensor<?x?xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %i, %c0 : tensor<?xi32>
  %w = tensor.dim %t, %c1 : tensor<?x?xi32>
  %e = tensor.empty(%n, %w) : tensor<?x?xi32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%i : tensor<?xi32>) outs(%e : tensor<?x?xi32>) {
  ^bb0(%in: i32, %out: i32):
    %r = arith.index_cast %in : i32 to index
    %c = linalg.index 1 : index
    %x = tensor.extract %t[%r, %c] : tensor<?x?xi32>
    linalg.yield %x : i32
  } -> tensor<?x?xi32>
  return %0 : tensor<?x?xi32>
}"""


def test_gather_with_dynamic_shapes_checks_against_the_runtime_size(load: Load) -> None:
    f = load(GATHER_DYNAMIC, "dyn.mlir", "f")
    t = np.arange(6 * 300, dtype=np.int32).reshape(6, 300)
    i = np.array([5, 0, 3], dtype=np.int32)
    np.testing.assert_array_equal(f(t, i), t[i])
    with pytest.raises(RuntimeFault, match=r"tensor\.extract at dyn\.mlir:12:5: index 6 is out "
                                           r"of range for dimension 0 of size 6"):
        f(t, np.array([5, 6, 0], dtype=np.int32))
    np.testing.assert_array_equal(f(t[:2], i[1:2]), t[:2][i[1:2]])


GATHER_FUSED = """
func.func @f(%t: tensor<4x3xf32>, %i: tensor<5xi64>, %s: index) -> tensor<5x3xf32> {
  %e = tensor.empty() : tensor<5x3xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%i : tensor<5xi64>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%in: i64, %out: f32):
    %r = arith.index_cast %in : i64 to index
    %c = linalg.index 1 : index
    %c2 = arith.remsi %c, %s : index
    %x = tensor.extract %t[%r, %c2] : tensor<4x3xf32>
    %y = tensor.extract %t[%r, %c] : tensor<4x3xf32>
    %z = arith.addf %x, %y : f32
    linalg.yield %z : f32
  } -> tensor<5x3xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<5x3xf32>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<5x3xf32>
  return %1 : tensor<5x3xf32>
}"""


def test_two_extracts_with_a_host_scalar_index_feed_elementwise_math(load: Load) -> None:
    f = load(GATHER_FUSED, "fused.mlir", "f")
    t = _floats(4, 3)
    i = np.array([3, 0, 0, 2, 1])
    for s in (3, 2, 1):
        cols = np.arange(3) % s
        np.testing.assert_allclose(f(t, i, s), (t[i][:, cols] + t[i]) ** 2, rtol=1e-6)


ASSERTED_RECIPROCAL = """
func.func @f(%x: tensor<6xf32>) -> tensor<6xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<6xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %nz = arith.cmpf one, %in, %zero : f32
    cf.assert %nz, "unimplemented: tensor with zero element"
    %r = arith.divf %one, %in : f32
    linalg.yield %r : f32
  } -> tensor<6xf32>
  return %0 : tensor<6xf32>
}"""


def test_a_kept_assert_that_holds_and_one_that_fails(load: Load) -> None:
    f = load(ASSERTED_RECIPROCAL, "recip.mlir", "f")
    x = np.array([1, 2, 4, -8, 0.5, 3], dtype=np.float32)
    np.testing.assert_allclose(f(x), 1 / x, rtol=1e-6)
    with pytest.raises(RuntimeFault, match=r"^dispatch '\S+' failed: cf\.assert at recip\.mlir:9:5 "
                                           r"failed: unimplemented: tensor with zero element$"):
        f(np.array([1, 2, 0, 3, 4, 5], dtype=np.float32))
    np.testing.assert_allclose(f(x * 2), 1 / (x * 2), rtol=1e-6)


def test_a_stripped_assert_is_not_checked(load: Load) -> None:
    f = load(ASSERTED_RECIPROCAL, "recip.mlir", "f", strip=True)
    result = f(np.array([1, 2, 0, 3, 4, 5], dtype=np.float32))
    assert np.isinf(result[2])  # type: ignore[index]


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("target", TARGETS)
def test_an_index_out_of_range_fails_the_signal_fence_of_an_async_call(target: str,
                                                                       driver: str) -> None:
    """async-external: the call returns once its work is queued; the failed check reaches the
    caller through the signal fence, with its message, and the next call on the context works."""
    src = _export("index_select")
    options = weir.CompilerOptions(target_backends=(target,), execution_model="async-external")
    t = _floats(3, 5)
    with weir.load([weir.compile_string(src, "index_select.mlir", options)],
                   device=driver) as ctx:
        main = ctx.lookup_function("main")

        def call(indices: list[int]) -> tuple[BufferView, Fence]:
            wait, signal = Fence.create(), Fence.create()
            if driver == "local-sync":  # runs inline: its wait fence must be reached first
                wait.signal()
            (result,) = main.invoke_async([BufferView.from_numpy(t),
                                           BufferView.from_numpy(np.array(indices))],
                                          wait, signal)
            if driver == "local-task":  # queued behind the wait fence until now
                assert not signal.query()
                wait.signal()
            return result, signal

        _, signal = call([0, 9, 1, 2])
        with pytest.raises(RuntimeFault, match=r"tensor\.extract at index_select\.mlir:\d+:7: "
                                               r"index 9 is out of range for dimension 1 of "
                                               r"size 5$"):
            signal.wait(DONE_S)
        result, signal = call([4, 1, 0, 3])
        assert signal.wait(DONE_S)
        np.testing.assert_array_equal(result.to_numpy(), t[:, [4, 1, 0, 3]])
