"""Transformers from the `transformers` library, small configurations and random weights
(nothing is downloaded): a BERT-style encoder, and a GPT-2-style decoder in its two calls, the
prompt pass that fills the key/value cache and one decoding step that reads it."""

from __future__ import annotations

import torch
from torch import nn
from transformers import BertConfig, BertModel, DynamicCache, GPT2Config, GPT2LMHeadModel

Built = tuple[nn.Module, tuple[torch.Tensor, ...]]


class BertEncoder(nn.Module):
    """BertModel's last hidden state and pooled output for token ids and an attention mask."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=True)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.bert(input_ids=ids, attention_mask=mask)
        return out.last_hidden_state, out.pooler_output


def _bert_config(hidden: int, layers: int, heads: int, vocab: int, positions: int) -> BertConfig:
    return BertConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
                      num_attention_heads=heads, intermediate_size=4 * hidden,
                      max_position_embeddings=positions, hidden_dropout_prob=0.0,
                      attention_probs_dropout_prob=0.0, attn_implementation="eager")


def bert(batch: int, seq: int, hidden: int, layers: int, heads: int, vocab: int) -> Built:
    torch.manual_seed(5)
    model = BertEncoder(_bert_config(hidden, layers, heads, vocab, max(64, seq))).eval()
    ids = torch.randint(0, vocab, (batch, seq))
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[0, seq - seq // 4:] = 0  # the first sequence is padded: the mask matters
    return model, (ids, mask)


def _gpt2(hidden: int, layers: int, heads: int, vocab: int) -> GPT2LMHeadModel:
    config = GPT2Config(vocab_size=vocab, n_embd=hidden, n_layer=layers, n_head=heads,
                        n_positions=256, bos_token_id=0, eos_token_id=0, resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0,
                        attn_implementation="eager")
    torch.manual_seed(6)
    return GPT2LMHeadModel(config).eval()


class GPT2Prompt(nn.Module):
    """The prompt pass: logits for every prompt token, and each layer's keys and values
    (flattened to a tuple of tensors, the cache the decoding step takes back)."""

    def __init__(self, model: GPT2LMHeadModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, ...]:
        out = self.model(input_ids=ids, use_cache=True)
        cache = out.past_key_values
        return (out.logits, *(t for layer in cache.layers for t in (layer.keys, layer.values)))


class GPT2Step(nn.Module):
    """One decoding step: the next token's logits from one token id and the cache of the
    tokens before it, and the cache grown by one position."""

    def __init__(self, model: GPT2LMHeadModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, *kv: torch.Tensor) -> tuple[torch.Tensor, ...]:
        cache = DynamicCache()
        for layer in range(len(kv) // 2):
            cache.update(kv[2 * layer], kv[2 * layer + 1], layer)
        past = kv[0].shape[2]
        positions = torch.arange(past, past + ids.shape[1]).unsqueeze(0)
        out = self.model(input_ids=ids, past_key_values=cache, position_ids=positions,
                         use_cache=True)
        grown = out.past_key_values
        return (out.logits, *(t for layer in grown.layers for t in (layer.keys, layer.values)))


def gpt2_prompt(batch: int, seq: int, hidden: int, layers: int, heads: int, vocab: int) -> Built:
    model = _gpt2(hidden, layers, heads, vocab)
    return GPT2Prompt(model), (torch.randint(0, vocab, (batch, seq)),)


def gpt2_step(batch: int, seq: int, hidden: int, layers: int, heads: int, vocab: int) -> Built:
    """The cache is the prompt pass's own, computed eagerly here, so the step sees real keys."""
    model = _gpt2(hidden, layers, heads, vocab)
    prompt = torch.randint(0, vocab, (batch, seq))
    with torch.no_grad():
        kv = GPT2Prompt(model)(prompt)[1:]
    return GPT2Step(model), (torch.randint(0, vocab, (batch, 1)), *kv)
