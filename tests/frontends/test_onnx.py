"""ONNX models through weir.frontends.onnx and weir-import-onnx, built here with onnx.helper and
compared with numpy references of the ONNX operators' definitions: an MLP (Gemm, Relu, MatMul),
a CNN (Conv, Relu, MaxPool, LRN), a grouped then depthwise convolution, 3-D Max/AveragePool, a
model of opset 9 (its MaxPool upgraded to 17 first) and an MLP saved with its weights as external data, each compiled
for both targets. Tolerances: rtol 1e-4, atol 1e-5 (float32 sums in another order). Also the
command-line tools in child processes, and the errors: a missing or broken file, an op
torch-mlir cannot lower, a missing frontend."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")  # the `onnx` extra; `make test` installs it
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import weir.frontends.onnx as wo  # noqa: E402
from weir.tools import import_onnx  # noqa: E402
from weir.errors import ExportError  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
TARGETS = ("reference", "llvm-cpu")
RNG = np.random.default_rng(18)


def weights(name: str, *shape: int) -> tuple[onnx.TensorProto, np.ndarray]:
    array = (RNG.standard_normal(shape) * 0.5).astype(np.float32)
    return numpy_helper.from_array(array, name), array


def graph_model(nodes: list[onnx.NodeProto], x_shape: list[int], y_shape: list[int | None],
                initializers: list[onnx.TensorProto], opset: int = 17,
                name: str = "g") -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


# ---------------------------------------------------------------- numpy references (ONNX spec)

def conv(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, group: int = 1,
         pad: int = 0, stride: int = 1) -> np.ndarray:
    """ONNX Conv, NCHW: each group's output channels see that group's input channels."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, f, oh, ow), np.float64)
    fg = f // group
    for g in range(group):
        xg = x[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xg[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                out[:, g * fg:(g + 1) * fg] += np.einsum("nchw,fc->nfhw", patch,
                                                          w[g * fg:(g + 1) * fg, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out.astype(np.float32)


def maxpool(x: np.ndarray, k: int, stride: int) -> np.ndarray:
    n, c, h, w = x.shape
    oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    windows = [x[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
               for i in range(k) for j in range(k)]
    return np.max(windows, axis=0)


def lrn(x: np.ndarray, size: int, alpha: float = 1e-4, beta: float = 0.75,
        bias: float = 1.0) -> np.ndarray:
    """ONNX LRN: square sum over channels [c - floor((size-1)/2), c + ceil((size-1)/2)]."""
    channels = x.shape[1]
    square_sum = np.zeros_like(x, np.float64)
    for c in range(channels):
        lo, hi = max(0, c - (size - 1) // 2), min(channels - 1, c + -(-(size - 1) // 2))
        square_sum[:, c] = (x[:, lo:hi + 1].astype(np.float64) ** 2).sum(axis=1)
    return (x / (bias + alpha / size * square_sum) ** beta).astype(np.float32)


# ------------------------------------------------------------------------------------- models

def mlp() -> tuple[onnx.ModelProto, np.ndarray, np.ndarray]:
    (w1p, w1), (b1p, b1), (w2p, w2), (b2p, b2) = (
        weights("w1", 16, 8), weights("b1", 16), weights("w2", 16, 4), weights("b2", 4))
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["m"]),
             helper.make_node("Add", ["m", "b2"], ["y"])]
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    expected = np.maximum(x @ w1.T + b1, 0) @ w2 + b2
    return graph_model(nodes, [2, 8], [2, 4], [w1p, b1p, w2p, b2p], name="mlp"), x, expected


def cnn() -> tuple[onnx.ModelProto, np.ndarray, np.ndarray]:
    (wp, w), (bp, b) = weights("w", 4, 3, 3, 3), weights("b", 4)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("LRN", ["p"], ["y"], size=3, alpha=0.5, beta=0.75, bias=2.0)]
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    expected = lrn(maxpool(np.maximum(conv(x, w, b, pad=1), 0), 2, 2), 3, 0.5, 0.75, 2.0)
    return graph_model(nodes, [2, 3, 8, 8], [2, 4, 4, 4], [wp, bp], name="cnn"), x, expected


def groups() -> tuple[onnx.ModelProto, np.ndarray, np.ndarray]:
    """A grouped convolution (2 groups of 2 channels), then a depthwise one (4 groups of 1)."""
    (wgp, wg), (wdp, wd) = weights("wg", 6, 2, 3, 3), weights("wd", 6, 1, 3, 3)
    nodes = [helper.make_node("Conv", ["x", "wg"], ["g"], group=2, strides=[2, 2]),
             helper.make_node("Conv", ["g", "wd"], ["y"], group=6, pads=[1, 1, 1, 1])]
    x = RNG.standard_normal((1, 4, 9, 9)).astype(np.float32)
    expected = conv(conv(x, wg, group=2, stride=2), wd, group=6, pad=1)
    return graph_model(nodes, [1, 4, 9, 9], [1, 6, 4, 4], [wgp, wdp], name="groups"), x, expected


def pool3d_reference(x: np.ndarray, kernel: tuple[int, ...], strides: tuple[int, ...],
                     combine: str) -> np.ndarray:
    spans = [(size - k) // s + 1 for size, k, s in zip(x.shape[2:], kernel, strides)]
    windows = [x[:, :, i:i + strides[0] * spans[0]:strides[0],
                 j:j + strides[1] * spans[1]:strides[1], k:k + strides[2] * spans[2]:strides[2]]
               for i in range(kernel[0]) for j in range(kernel[1]) for k in range(kernel[2])]
    return np.max(windows, axis=0) if combine == "max" else np.mean(windows, axis=0)


def pool3d() -> tuple[onnx.ModelProto, np.ndarray, np.ndarray]:
    """3-D MaxPool (a linalg.generic from torch-mlir), then 3-D AveragePool (a named one)."""
    nodes = [helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[2, 2, 2], strides=[2, 1, 1]),
             helper.make_node("AveragePool", ["m"], ["y"], kernel_shape=[1, 2, 2])]
    x = RNG.standard_normal((1, 2, 5, 6, 6)).astype(np.float32)
    expected = pool3d_reference(pool3d_reference(x, (2, 2, 2), (2, 1, 1), "max"), (1, 2, 2),
                                (1, 1, 1), "mean")
    return graph_model(nodes, [1, 2, 5, 6, 6], [1, 2, 2, 4, 4], [], name="pool3d"), x, expected


def opset9() -> tuple[onnx.ModelProto, np.ndarray, np.ndarray]:
    nodes = [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], strides=[2, 2]),
             helper.make_node("Relu", ["p"], ["y"])]
    x = RNG.standard_normal((1, 2, 7, 7)).astype(np.float32)
    expected = np.maximum(maxpool(x, 3, 2), 0)
    return graph_model(nodes, [1, 2, 7, 7], [1, 2, 3, 3], [], opset=9, name="old"), x, expected


MODELS = {"mlp": mlp, "cnn": cnn, "groups": groups, "pool3d": pool3d, "opset9": opset9}


@pytest.fixture(scope="module", params=list(MODELS))
def model(request: pytest.FixtureRequest) -> tuple[onnx.ModelProto, np.ndarray, np.ndarray]:
    return MODELS[request.param]()


@pytest.mark.parametrize("target", TARGETS)
def test_model_matches_numpy(model: tuple[onnx.ModelProto, np.ndarray, np.ndarray],
                             target: str) -> None:
    proto, x, expected = model
    with wo.compile(proto, target=target, device="local-sync") as compiled:
        got = compiled(x)
    assert got.shape == expected.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_import_gives_linalg_main_and_upgrades_old_opsets() -> None:
    proto, _, _ = opset9()
    text = wo.import_model(proto)
    assert "func.func @main(%arg0: tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>" in text
    assert "linalg.pooling_nchw_max" in text and "torch." not in text
    # Kept at opset 9, its MaxPool is one torch-mlir does not match: why models are upgraded.
    with pytest.raises(ExportError, match=r"^old: torch-mlir cannot lower ONNX op 'MaxPool' "):
        wo.import_model(proto, opset_version=9)
    with pytest.raises(ExportError, match=r"^old: cannot convert from opset 9 to opset 1000 "):
        wo.import_model(proto, opset_version=1000)


def test_external_data_next_to_the_model(tmp_path: Path) -> None:
    """Weights in model.onnx.data beside model.onnx, loaded from there by the path; the default
    compile() (llvm-cpu on local-task)."""
    proto, x, expected = mlp()
    path = tmp_path / "model.onnx"
    onnx.save(proto, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
              location="model.onnx.data", size_threshold=0)
    assert (tmp_path / "model.onnx.data").stat().st_size == (16 * 8 + 16 + 16 * 4 + 4) * 4
    assert path.stat().st_size < 1000  # the weights are not in the model file
    with wo.compile(path) as compiled:
        np.testing.assert_allclose(compiled(x), expected, rtol=RTOL, atol=ATOL)
    (tmp_path / "model.onnx.data").unlink()
    with pytest.raises(ExportError, match="model.onnx: cannot read its external data"):
        wo.import_model(path)


def test_cli_data_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--data-dir: the model moved away from its external data, which is found there."""
    proto, _, _ = mlp()
    (tmp_path / "weights").mkdir()
    onnx.save(proto, str(tmp_path / "weights" / "mlp.onnx"), save_as_external_data=True,
              location="mlp.bin", size_threshold=0)
    (tmp_path / "weights" / "mlp.onnx").rename(tmp_path / "mlp.onnx")
    assert import_onnx.main([str(tmp_path / "mlp.onnx")]) == 1
    assert "mlp.onnx: cannot read its external data" in capsys.readouterr().err
    out = tmp_path / "mlp.mlir"
    assert import_onnx.main([str(tmp_path / "mlp.onnx"), f"--data-dir={tmp_path / 'weights'}",
                             "-o", str(out)]) == 0
    assert "func.func @main(%arg0: tensor<2x8xf32>) -> tensor<2x4xf32>" in out.read_text()


def test_unlowerable_op_is_named() -> None:
    node = helper.make_node("STFT", ["x", "x"], ["y"], name="spectrum")
    proto = graph_model([node], [3, 3], [None, None], [])
    with pytest.raises(ExportError, match=r"^g: torch-mlir cannot lower ONNX op 'STFT' \(node "
                                          r"'spectrum'\) to linalg-on-tensors \(failed to "
                                          r"legalize operation 'torch.operator'"):
        wo.import_model(proto)


def test_import_verification_failure_is_an_export_error() -> None:
    """A graph whose value_info for its output disagrees with the output's own type: torch-mlir's
    imported IR does not verify, which is one ExportError, not MLIR's exception."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "stale",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        value_info=[helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ExportError, match=r"^stale: torch-mlir cannot import the model \(type "
                                          r"of return operand 0 .* doesn't match function "
                                          r"result type"):
        wo.import_model(proto)


def _tool(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", f"weir.tools.{module}", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_cli_import_compile_run(tmp_path: Path) -> None:
    """weir-import-onnx, then weir-compile for llvm-cpu, then weir-run-module on the result."""
    proto, x, expected = mlp()
    onnx.save(proto, str(tmp_path / "mlp.onnx"))
    np.save(tmp_path / "x.npy", x)
    steps = [("import_onnx", "mlp.onnx", "--opset-version=17", "--no-data-prop",
              "-o", "mlp.mlir"),
             ("compile", "--iree-hal-target-backends=llvm-cpu", "mlp.mlir", "-o", "mlp.wvm"),
             ("run_module", "--module=mlp.wvm", "--function=main", "--input=@x.npy",
              "--output=@y.npy")]
    for module, *args in steps:
        done = _tool(module, *args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    assert "func.func @main" in (tmp_path / "mlp.mlir").read_text()
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("setup, args, message", [
    (None, ["missing.onnx"], "weir-import-onnx: error: missing.onnx: no such ONNX file"),
    ("garbage", ["bad.onnx"], "weir-import-onnx: error: bad.onnx: not an ONNX model"),
    ("stft", ["stft.onnx"], "weir-import-onnx: error: stft.onnx: torch-mlir cannot lower ONNX "
                            "op 'STFT' (node 'STFT_0') to linalg-on-tensors"),
    (None, ["a.onnx", "--opset-version=0"],
     "weir-import-onnx: error: --opset-version: expected an opset number >= 1, got 0"),
], ids=["missing", "not-onnx", "unlowerable", "bad-flag"])
def test_cli_errors_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str], setup: str | None,
                                 args: list[str], message: str) -> None:
    """In this process (the child-process run is above): exit code 1, one line, no output."""
    if setup == "garbage":
        (tmp_path / "bad.onnx").write_bytes(b"\x08\x07\xff\xff not a protobuf")
    elif setup == "stft":
        onnx.save(graph_model([helper.make_node("STFT", ["x", "x"], ["y"])], [3, 3],
                              [None, None], []), str(tmp_path / "stft.onnx"))
    monkeypatch.chdir(tmp_path)
    assert import_onnx.main(args) == 1
    out, err = capsys.readouterr()
    assert err.startswith(message) and err.count("\n") == 1, err
    assert out == ""


def test_cli_help_lists_the_iree_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert import_onnx.main(["--help"]) == 0
    out = capsys.readouterr().out
    for flag in ("--o=FILE", "--opset-version=N", "--data-prop", "--no-data-prop",
                 "--data-dir=DIR", "--temp-dir=DIR", "--keep-temps", "--clear-domain",
                 "--no-verify"):
        assert f"\n  {flag}\n" in out, flag


def test_missing_frontend_names_the_extra(tmp_path: Path) -> None:
    """Without onnx installed (hidden from the child), both entry points say what to install."""
    hide = "import sys; sys.modules['onnx'] = None; "
    cli = subprocess.run([sys.executable, "-c", hide + "from weir.tools.import_onnx import main; "
                          "sys.exit(main(['m.onnx']))"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert cli.returncode == 1
    assert cli.stderr == ("weir-import-onnx: error: needs onnx and torch-mlir (onnx is missing): "
                          "pip install weir[onnx]\n")
    api = subprocess.run([sys.executable, "-c", hide + "import weir.frontends.onnx"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert api.returncode == 1
    assert api.stderr.strip().endswith("weir.errors.UsageError: weir.frontends.onnx needs onnx "
                                       "and torch-mlir: pip install weir[onnx]")
