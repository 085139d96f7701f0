"""PyTorch ops that torch-mlir lowers to tm_tensor ops (torch.topk to a sort,
torch.cumsum to a scan, index_put to a scatter: a KV-cache row update), compiled through
weir.frontends.torch for both targets and compared with eager PyTorch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")  # the `torch` extra; `make test` installs it
import weir.frontends.torch as wt  # noqa: E402

TARGETS = ("reference", "llvm-cpu")


class TopkCumsum(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        values, indices = torch.topk(x, 5, dim=1)
        return values, indices, torch.cumsum(x, dim=0)


class CacheUpdate(torch.nn.Module):
    def forward(self, cache: torch.Tensor, positions: torch.Tensor,
                rows: torch.Tensor) -> torch.Tensor:
        return torch.ops.aten.index_put(cache, (positions,), rows)


@pytest.mark.parametrize("target", TARGETS)
def test_topk_and_cumsum_match_eager(target: str) -> None:
    torch.manual_seed(0)
    x = torch.randn(3, 40)
    model = TopkCumsum()
    values, indices, sums = wt.compile(model, x, target=target)(x)
    expected = model(x)
    torch.testing.assert_close(values, expected[0])
    torch.testing.assert_close(indices, expected[1])
    torch.testing.assert_close(sums, expected[2], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_kv_cache_update_matches_eager(target: str) -> None:
    torch.manual_seed(1)
    cache, rows = torch.randn(16, 8), torch.randn(3, 8)
    positions = torch.tensor([2, 9, 15])
    model = CacheUpdate()
    out = wt.compile(model, cache, positions, rows, target=target)(cache, positions, rows)
    torch.testing.assert_close(out, model(cache, positions, rows))
