"""The small models of the zoo: an MLP, an LSTM over a sequence, and a sampling head (softmax,
top-k, sort, cumulative sum: top-k then top-p filtering of next-token probabilities)."""

from __future__ import annotations

import torch
from torch import nn

Built = tuple[nn.Module, tuple[torch.Tensor, ...]]


def mlp(batch: int, features: int, hidden: int, classes: int) -> Built:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                          nn.ReLU(), nn.Linear(hidden, classes))
    return model.eval(), (torch.randn(batch, features),)


class LSTMTagger(nn.Module):
    """A stacked LSTM over the whole sequence and a linear head on every step (torch-mlir
    unrolls the steps: the graph grows with steps x layers)."""

    def __init__(self, features: int, hidden: int, classes: int, layers: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.lstm(x)
        return self.head(y)


def lstm(batch: int, steps: int, features: int, hidden: int, classes: int, layers: int) -> Built:
    torch.manual_seed(3)
    model = LSTMTagger(features, hidden, classes, layers).eval()
    return model, (torch.randn(batch, steps, features),)


class SamplingHead(nn.Module):
    """What a decoder does with its last logits before drawing a token, drawing excluded:
    temperature, softmax, the k most likely tokens, then the smallest prefix of them (by
    probability) whose mass reaches `top_p`, renormalised. Returns the kept probabilities and
    their token ids, most likely first."""

    def __init__(self, k: int, top_p: float = 0.9, temperature: float = 0.8) -> None:
        super().__init__()
        self.k, self.top_p, self.temperature = k, top_p, temperature

    def forward(self, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        probs = torch.softmax(logits / self.temperature, dim=-1)
        top, ids = torch.topk(probs, self.k, dim=-1)
        ordered, order = torch.sort(top, dim=-1, descending=True)
        before = torch.cumsum(ordered, dim=-1) - ordered
        kept = torch.where(before < self.top_p, ordered, torch.zeros_like(ordered))
        return kept / kept.sum(-1, keepdim=True), torch.gather(ids, -1, order)


def sampling_head(batch: int, vocab: int, k: int) -> Built:
    torch.manual_seed(4)
    # Logits spread enough that the top-p cut falls inside the top k.
    return SamplingHead(k).eval(), (torch.randn(batch, vocab) * 3,)
