"""PyTorch models through weir.frontends.torch, against eager PyTorch: each model exported once,
compiled once per target (reference, llvm-cpu) and run on both drivers, and through
torch.compile(backend="weir"). Seeded weights, small sizes. Tolerances: rtol 1e-4, atol 1e-5
(float32 sums in another order; the MLP and CNN match within ~1e-7)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")  # the `torch` extra; `make test` installs it
import weir.frontends.torch as wt  # noqa: E402
from weir.errors import CompileError, ExportError  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
TARGETS = ("reference", "llvm-cpu")
DRIVERS = ("local-sync", "local-task")


class CNN(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(4 * 4 * 4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pool(torch.relu(self.bn(self.conv(x))))
        return self.fc(torch.flatten(y, 1))


def _mlp() -> tuple[torch.nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    return model.eval(), torch.randn(2, 8)


def _cnn() -> tuple[torch.nn.Module, torch.Tensor]:
    torch.manual_seed(1)
    model = CNN()
    with torch.no_grad():  # running statistics that are not the identity
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    return model.eval(), torch.randn(2, 3, 8, 8)


def _encoder() -> tuple[torch.nn.Module, torch.Tensor]:
    torch.manual_seed(2)
    model = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    return model.eval(), torch.randn(2, 5, 16)


MODELS: dict[str, Callable[[], tuple[torch.nn.Module, torch.Tensor]]] = {
    "mlp": _mlp, "cnn": _cnn, "encoder": _encoder}


@pytest.fixture(scope="module", params=[(m, t) for m in MODELS for t in TARGETS],
                ids=lambda p: f"{p[0]}-{p[1]}")
def compiled(request: pytest.FixtureRequest) -> Iterator[tuple[wt.CompiledModel, torch.nn.Module,
                                                               torch.Tensor]]:
    model, x = MODELS[request.param[0]]()
    with wt.compile(model, x, target=request.param[1], device="local-sync") as cm:
        yield cm, model, x


@pytest.mark.parametrize("driver", DRIVERS)
def test_compile_matches_eager(compiled: tuple[wt.CompiledModel, torch.nn.Module, torch.Tensor],
                               driver: str) -> None:
    cm, model, x = compiled
    with cm.on(driver) as run, torch.no_grad():
        got = run(x)
        torch.testing.assert_close(got, model(x), rtol=RTOL, atol=ATOL)
        # Another input of the compiled shape: the weights are baked in, the input is not.
        torch.testing.assert_close(run(x * 0.5 + 1), model(x * 0.5 + 1), rtol=RTOL, atol=ATOL)


def test_compile_defaults_to_native_code_on_local_task() -> None:
    model, x = _mlp()
    with wt.compile(model, x) as cm:
        assert b"llvm-cpu" in cm.module and b"reference" not in cm.module
        assert type(cm.context.devices[0]).__name__ == "LocalTaskDevice"
        result = cm(x)
        assert isinstance(result, torch.Tensor) and result.dtype == torch.float32
        torch.testing.assert_close(result, model(x).detach(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", ["mlp", "cnn", "encoder"])
def test_torch_compile_backend(name: str) -> None:
    """With autograd on, as a model is usually called (under no_grad the encoder takes
    PyTorch's fused fast path: see the test below)."""
    torch._dynamo.reset()
    model, x = MODELS[name]()
    fast = torch.compile(model, backend="weir")
    torch.testing.assert_close(fast(x), model(x).detach(), rtol=RTOL, atol=ATOL)


def test_fused_op_torch_mlir_cannot_lower_is_named() -> None:
    """Under no_grad an eval TransformerEncoderLayer is one fused aten op in dynamo's graph,
    which torch-mlir has no lowering for: one line naming it."""
    torch._dynamo.reset()
    model, x = _encoder()
    with torch.no_grad(), pytest.raises(ExportError) as error:
        torch.compile(model, backend="weir")(x)
    assert str(error.value) == ("GraphModule: torch-mlir cannot lower "
                                "'aten._transformer_encoder_layer_fwd' to linalg-on-tensors")


def test_backend_caches_by_input_shapes() -> None:
    model, x = _mlp()
    graph = wt.backend(torch.fx.symbolic_trace(model), [x], target="reference",
                       device="local-sync")
    with torch.no_grad():
        for inp in (x, x + 1, torch.randn(3, 8)):
            torch.testing.assert_close(graph(inp), model(inp), rtol=RTOL, atol=ATOL)
    assert sorted(shape for ((shape, _),) in graph.compiled) == [(2, 8), (3, 8)]
    for cm in graph.compiled.values():
        cm.close()


def test_export_is_linalg_on_tensors() -> None:
    model, x = _mlp()
    text = wt.export(model, x)
    assert "func.func @main(%arg0: tensor<2x8xf32>) -> tensor<2x4xf32>" in text
    assert "linalg.matmul" in text or "linalg.generic" in text
    assert re.search(r"^\s*(%\S+ = )?torch\.", text, re.M) is None  # no torch-dialect op left


def test_op_torch_mlir_cannot_lower_is_one_line() -> None:
    class FFT(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.fft.fft(x).real

    with pytest.raises(CompileError) as error:
        wt.export(FFT(), torch.randn(8))
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{__file__}:") and \
        "torch-mlir cannot lower 'aten.fft_fft' to linalg-on-tensors" in message


def test_weir_compile_error_is_located_in_kept_mlir(tmp_path: Path) -> None:
    class Complex(torch.nn.Module):  # torch-mlir lowers it to the complex dialect weir lacks
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.to(torch.complex64).real

    kept = tmp_path / "complex.mlir"
    with pytest.raises(CompileError) as error:
        wt.compile(Complex(), torch.randn(4), target="reference", keep_mlir=kept)
    line = kept.read_text().splitlines()[error.value.line - 1]
    assert error.value.filename == str(kept) and "complex.create" in line
    assert "Operation complex.create is not registered" in error.value.message


def test_f8_round_trip_follows_mlir_arith_not_eager_saturation() -> None:
    """f8E4M3FN compiles now; past its largest value MLIR's truncf (and IREE) give NaN where
    PyTorch's eager cast saturates to -448."""
    class Float8(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.to(torch.float8_e4m3fn).to(torch.float32)

    x = torch.tensor([0.1, 300.0, -1000.0, 1.0])
    for target in TARGETS:
        got = wt.compile(Float8(), x, target=target)(x)
        eager = Float8()(x)
        assert torch.equal(got[[0, 1, 3]], eager[[0, 1, 3]]) and torch.isnan(got[2]), target


@pytest.mark.parametrize("target", TARGETS)
def test_kept_batch_norm_asserts_hold_and_the_cnn_matches_eager(tmp_path: Path,
                                                                target: str) -> None:
    model, x = _cnn()
    kept = tmp_path / "cnn.mlir"
    with wt.compile(model, x, target=target, device="local-sync", keep_mlir=kept,
                    strip_assertions=False) as cm, torch.no_grad():
        assert "cf.assert" in kept.read_text()
        torch.testing.assert_close(cm(x), model(x), rtol=RTOL, atol=ATOL)


class Offsets(torch.nn.Module):
    """A non-persistent buffer (as BERT's position ids): torch.export keeps it among the
    program's constants, not in its state dict."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("offsets", torch.arange(4.0), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 + self.offsets


def test_non_persistent_buffer_is_a_constant() -> None:
    model, x = Offsets(), torch.randn(3, 4)
    with wt.compile(model, x, target="reference", device="local-sync") as cm:
        torch.testing.assert_close(cm(x), model(x), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("target", TARGETS)
def test_ceil_mode_pooling_reads_a_padded_input_partly(target: str) -> None:
    """torch-mlir pads the high side for ceil-mode pooling and states an output that leaves the
    padded input's last rows unread (15 -> 17 rows, 7 outputs where 8 would fit): valid MLIR,
    and SqueezeNet's pools."""
    torch.manual_seed(5)
    model = torch.nn.Sequential(torch.nn.MaxPool2d(3, 2, ceil_mode=True),
                                torch.nn.AvgPool2d(2, 2, ceil_mode=True)).eval()
    x = torch.randn(1, 2, 15, 15)
    for driver in DRIVERS:
        with wt.compile(model, x, target=target, device=driver) as cm:
            torch.testing.assert_close(cm(x), model(x), rtol=RTOL, atol=ATOL)
