"""Every model of the zoo (benchmarks/models/registry.py, at its test size) through
weir.frontends.torch against eager PyTorch: compile() for the reference and llvm-cpu targets,
each run on local-sync and local-task, and torch.compile(model, backend="weir"). Tolerances are
the registry's, per model; outputs that are integers (token ids) compare exactly."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

torch = pytest.importorskip("torch")  # the `torch` extra; `make test` installs it
pytest.importorskip("transformers")
import weir.frontends.torch as wt  # noqa: E402
from benchmarks.models.registry import MODELS, ZooModel  # noqa: E402

TARGETS = ("reference", "llvm-cpu")
DRIVERS = ("local-sync", "local-task")
Case = tuple[ZooModel, torch.nn.Module, tuple[torch.Tensor, ...], object]


@pytest.fixture(scope="module", params=MODELS, ids=lambda m: m.name)
def case(request: pytest.FixtureRequest) -> Case:
    """The model built once per module, with its eager outputs."""
    entry: ZooModel = request.param
    model, inputs = entry.build("test")
    with torch.no_grad():
        expected = model(*inputs)
    return entry, model, inputs, expected


def check(entry: ZooModel, got: object, expected: object) -> None:
    torch.testing.assert_close(got, expected, rtol=entry.rtol, atol=entry.atol)


@pytest.fixture(scope="module", params=TARGETS)
def compiled(case: Case, request: pytest.FixtureRequest) -> Iterator[wt.CompiledModel]:
    entry, model, inputs, _ = case
    with wt.compile(model, *inputs, target=request.param, device="local-sync") as cm:
        yield cm


@pytest.mark.parametrize("driver", DRIVERS)
def test_compile_matches_eager(case: Case, compiled: wt.CompiledModel, driver: str) -> None:
    entry, _, inputs, expected = case
    with compiled.on(driver) as run:
        check(entry, run(*inputs), expected)


def test_torch_compile_matches_eager(case: Case) -> None:
    entry, model, inputs, expected = case
    torch._dynamo.reset()
    with torch.no_grad():
        got = torch.compile(model, backend="weir")(*inputs)
    check(entry, got, expected)
