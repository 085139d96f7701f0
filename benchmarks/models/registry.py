"""The zoo's one list of models, read by the tests (tests/models/, at `test` sizes) and by the
benchmark (`python -m benchmarks.models`, at `bench` sizes), so both run the same graphs.

Each entry builds its model with seeded random weights (nothing is downloaded) and returns it
with example inputs; the sizes are the builder's keyword arguments. Tolerances are those the
compiled model must meet against eager PyTorch (torch.testing.assert_close's rtol/atol): f32
sums taken in another order, grown with depth. Test sizes are small in depth as well as width
(weir compiles in Python: its compile time grows with the number of ops), but build every kind
of layer the benchmark size has."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from benchmarks.models import cnn, small, vision

Built = tuple[nn.Module, tuple[torch.Tensor, ...]]


@dataclass(frozen=True)
class ZooModel:
    name: str
    builder: Callable[..., Built]
    test: Mapping[str, int]
    bench: Mapping[str, int]
    rtol: float = 1e-4
    atol: float = 1e-5

    def build(self, size: str = "test") -> Built:
        """The model in eval mode and its example inputs at `size` ("test" or "bench")."""
        if size not in ("test", "bench"):
            raise ValueError(f"size: expected 'test' or 'bench', got {size!r}")
        return self.builder(**(self.test if size == "test" else self.bench))


def _language(name: str) -> Callable[..., Built]:
    """transformers is imported only when a transformer is built: it is slow to import."""

    def build(**sizes: Any) -> Built:
        from benchmarks.models import language

        return getattr(language, name)(**sizes)  # type: ignore[no-any-return]

    build.__name__ = name
    return build


_BERT_TEST = dict(batch=2, seq=8, hidden=32, layers=1, heads=2, vocab=64)
_BERT_BENCH = dict(batch=4, seq=128, hidden=256, layers=4, heads=4, vocab=8192)
_GPT2_TEST = dict(batch=1, seq=8, hidden=32, layers=1, heads=2, vocab=64)
_GPT2_BENCH = dict(batch=1, seq=128, hidden=256, layers=4, heads=4, vocab=8192)

MODELS: tuple[ZooModel, ...] = (
    ZooModel("mlp", small.mlp, dict(batch=4, features=16, hidden=32, classes=8),
             dict(batch=64, features=784, hidden=1024, classes=10)),
    ZooModel("resnet18", vision.resnet18, dict(batch=1, image=32, width=4, classes=10, blocks=1),
             dict(batch=1, image=224, width=64, classes=1000, blocks=2), rtol=1e-4, atol=1e-4),
    ZooModel("mobilenet_v2", vision.mobilenet_v2,
             dict(batch=1, image=32, width=8, classes=10, repeats=2, stages=3),
             dict(batch=1, image=224, width=32, classes=1000, repeats=4, stages=7), rtol=1e-4, atol=1e-4),
    ZooModel("bert", _language("bert"), _BERT_TEST, _BERT_BENCH, atol=1e-4),
    ZooModel("gpt2_prompt", _language("gpt2_prompt"), _GPT2_TEST, _GPT2_BENCH, atol=1e-4),
    ZooModel("gpt2_step", _language("gpt2_step"), _GPT2_TEST, _GPT2_BENCH, atol=1e-4),
    ZooModel("lstm", small.lstm, dict(batch=2, steps=3, features=8, hidden=16, classes=4, layers=2),
             dict(batch=8, steps=16, features=128, hidden=256, classes=32, layers=2)),
    ZooModel("sampling_head", small.sampling_head, dict(batch=2, vocab=64, k=16),
             dict(batch=8, vocab=32000, k=50)),
    ZooModel("resnet50", cnn.resnet50, dict(batch=1, image=32, width=4, classes=10, blocks=1),
             dict(batch=1, image=224, width=64, classes=1000, blocks=6), rtol=1e-4, atol=1e-4),
    ZooModel("vgg", cnn.vgg, dict(batch=1, image=32, width=4, classes=10, convs=1, hidden=16),
             dict(batch=1, image=224, width=64, classes=1000, convs=4, hidden=4096),
             rtol=1e-4, atol=1e-4),
    ZooModel("squeezenet", cnn.squeezenet, dict(batch=1, image=32, width=2, classes=10, fires=3),
             dict(batch=1, image=224, width=16, classes=1000, fires=8), rtol=1e-4, atol=1e-4),
    ZooModel("densenet", cnn.densenet, dict(batch=1, image=32, growth=4, classes=10, layers=1),
             dict(batch=1, image=224, growth=32, classes=1000, layers=24), rtol=1e-4, atol=1e-4),
)

BY_NAME: dict[str, ZooModel] = {m.name: m for m in MODELS}
