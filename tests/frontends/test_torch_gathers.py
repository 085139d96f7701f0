"""Embedding lookups, index_select, gather, embedding_bag and a small GPT-style model with token
and position embeddings through weir.frontends.torch.compile, against eager PyTorch on both
targets and drivers: torch-mlir lowers them to linalg.generic bodies that read a table with
tensor.extract at indices loaded from a tensor. An index out of range is a run-time error that
names the op and its line in the exported MLIR; the next call on the same model works."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

torch = pytest.importorskip("torch")  # the `torch` extra; `make test` installs it
import weir.frontends.torch as wt  # noqa: E402
from weir.errors import RuntimeFault  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5  # the GPT block sums in another order; gathers are exact
TARGETS = ("reference", "llvm-cpu")
DRIVERS = ("local-sync", "local-task")


class IndexSelect(torch.nn.Module):
    def forward(self, t: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
        return torch.index_select(t, 1, i)


class Gather(torch.nn.Module):
    def __init__(self, axis: int) -> None:
        super().__init__()
        self.axis = axis

    def forward(self, t: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
        return torch.gather(t, self.axis, i)


class EmbeddingBag(torch.nn.Module):
    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.embedding_bag(torch.tensor([1, 2, 4, 5, 4, 3]), weight,
                                                 torch.tensor([0, 3]), mode="sum")


class TinyGPT(torch.nn.Module):
    """Token and position embeddings, one causal attention block and a tied output head."""

    def __init__(self, vocab: int = 50, context: int = 8, width: int = 16) -> None:
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, width)
        self.positions = torch.nn.Embedding(context, width)
        self.norm = torch.nn.LayerNorm(width)
        self.attention = torch.nn.MultiheadAttention(width, 2, batch_first=True)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        n = ids.shape[1]
        x = self.tokens(ids) + self.positions(torch.arange(n))
        mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        h = self.norm(x)
        x = x + self.attention(h, h, h, attn_mask=mask, need_weights=False)[0]
        return self.norm(x) @ self.tokens.weight.T


def _embedding() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(3)
    return torch.nn.Embedding(100, 16), (torch.randint(0, 100, (2, 5)),)


def _index_select() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(4)
    return IndexSelect(), (torch.randn(3, 7), torch.tensor([6, 0, 2, 2, 5]))


def _gather(axis: int) -> Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]:
    def make() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
        torch.manual_seed(5)
        return Gather(axis), (torch.randn(4, 6), torch.randint(0, 4 if axis == 0 else 6, (3, 5)))
    return make


def _embedding_bag() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(6)
    return EmbeddingBag(), (torch.randn(10, 3),)


def _gpt() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(7)
    return TinyGPT().eval(), (torch.randint(0, 50, (2, 8)),)


MODELS = {"embedding": _embedding, "index_select": _index_select, "gather0": _gather(0),
          "gather1": _gather(1), "embedding_bag": _embedding_bag, "gpt": _gpt}
Compiled = tuple[wt.CompiledModel, torch.nn.Module, tuple[torch.Tensor, ...]]


@pytest.fixture(scope="module", params=[(m, t) for m in MODELS for t in TARGETS],
                ids=lambda p: f"{p[0]}-{p[1]}")
def compiled(request: pytest.FixtureRequest) -> Iterator[Compiled]:
    model, args = MODELS[request.param[0]]()
    with wt.compile(model, *args, target=request.param[1], device="local-sync") as cm:
        yield cm, model, args


@pytest.mark.parametrize("driver", DRIVERS)
def test_gathers_match_eager(compiled: Compiled, driver: str) -> None:
    cm, model, args = compiled
    with cm.on(driver) as run, torch.no_grad():
        torch.testing.assert_close(run(*args), model(*args), rtol=RTOL, atol=ATOL)
        flipped = tuple(a.flip(-1).contiguous() for a in args)  # other indices, same shapes
        torch.testing.assert_close(run(*flipped), model(*flipped), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("strip", [True, False])
def test_an_index_out_of_range_names_the_op_and_the_next_call_works(target: str,
                                                                    strip: bool) -> None:
    model, (ids,) = _embedding()
    with wt.compile(model, ids, target=target, device="local-task",
                    strip_assertions=strip) as cm, torch.no_grad():
        bad = ids.clone()
        bad[1, 3] = 100
        expected = (r"tensor\.extract at Embedding\.mlir:\d+:\d+: index 100 is out of range for "
                    r"dimension 0 of size 100$" if strip else
                    r"cf\.assert at Embedding\.mlir:\d+:\d+ failed: index must be smaller than "
                    r"dim size$")
        with pytest.raises(RuntimeFault, match=expected):
            cm(bad)
        torch.testing.assert_close(cm(ids), model(ids), rtol=RTOL, atol=ATOL)
