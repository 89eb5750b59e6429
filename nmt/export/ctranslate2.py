"""Our Transformer as a CTranslate2 model: a second export target, for services that use it.

`convert()` fills CTranslate2's `TransformerSpec` (post-norm, as the paper and our default;
pre-norm models too) with the trained weights: our fused key/value projection becomes its
fused query/key/value (self-attention) or key/value (cross-attention) projection, our
sinusoidal table its custom position table, and the vocabularies its token lists. The source
is given as our tokens with the closing </s> (CTranslate2 adds nothing), so
`translate_batch` decodes exactly the source ids our search decodes.

Length penalty: CTranslate2 divides a hypothesis' log-probability by |Y| ** length_penalty;
our search by ((5 + |Y|) / 6) ** alpha (GNMT). The two rank finished hypotheses differently,
so beam outputs may differ in a few lines; greedy outputs do not depend on it.
Translating with the result: `nmt.runtime.ct2.Ct2Translator` (torch-free).
`pip install "nmt[ct2]"` installs CTranslate2; nothing else in nmt needs it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
from torch import nn

from nmt.errors import NmtError
from nmt.model.transformer import Transformer
from nmt.runtime.ct2 import INSTALL
from nmt.text.vocab import Vocabulary

log = logging.getLogger(__name__)


def _np(t: Any) -> np.ndarray:
    return t.detach().float().cpu().numpy()


def _linear(spec: Any, *layers: nn.Linear) -> None:
    """One CTranslate2 linear from one or more of ours stacked on the output axis."""
    spec.weight = np.concatenate([_np(layer.weight) for layer in layers])
    spec.bias = np.concatenate([_np(layer.bias) for layer in layers])


def _norm(spec: Any, norm: nn.Module) -> None:
    spec.gamma, spec.beta = _np(norm.weight), _np(norm.bias)


def _attention(spec: Any, attn: Any, self_attention: bool) -> None:
    if self_attention:  # fused Q, K, V
        _linear(spec.linear[0], attn.q_proj, attn.kv_proj)
    else:  # Q; fused K, V
        _linear(spec.linear[0], attn.q_proj)
        _linear(spec.linear[1], attn.kv_proj)
    _linear(spec.linear[-1], attn.out_proj)


def build_spec(model: Transformer, src_vocab: Vocabulary, tgt_vocab: Vocabulary) -> Any:
    """The filled `TransformerSpec` of `model`."""
    try:
        from ctranslate2.specs import transformer_spec
    except ImportError as exc:
        raise NmtError(INSTALL) from exc
    cfg = model.cfg
    spec = transformer_spec.TransformerSpec.from_config((cfg.n_layers, cfg.n_layers), cfg.n_heads,
                                                        pre_norm=cfg.norm_first)
    table = _np(model.pe)
    for side, embedding, norm in ((spec.encoder, model.src_embed, model.enc_norm),
                                  (spec.decoder, model.tgt_embed, model.dec_norm)):
        (side.embeddings[0] if isinstance(side.embeddings, list) else side.embeddings).weight = _np(embedding.weight)
        side.scale_embeddings = True  # x * sqrt(d_model) + PE, section 3.4
        side.position_encodings.encodings = table
        if cfg.norm_first:  # pre-norm: one final LayerNorm per stack
            _norm(side.layer_norm, norm)
    for ours, theirs in zip(model.encoder, spec.encoder.layer):
        _attention(theirs.self_attention, ours.self_attn, self_attention=True)
        _norm(theirs.self_attention.layer_norm, ours.res1.norm)
        _linear(theirs.ffn.linear_0, ours.ffn.w1)
        _linear(theirs.ffn.linear_1, ours.ffn.w2)
        _norm(theirs.ffn.layer_norm, ours.res2.norm)
    for layer, theirs in zip(model.decoder, spec.decoder.layer):
        _attention(theirs.self_attention, layer.self_attn, self_attention=True)
        _norm(theirs.self_attention.layer_norm, layer.res1.norm)
        _attention(theirs.attention, layer.cross_attn, self_attention=False)
        _norm(theirs.attention.layer_norm, layer.res2.norm)
        _linear(theirs.ffn.linear_0, layer.ffn.w1)
        _linear(theirs.ffn.linear_1, layer.ffn.w2)
        _norm(theirs.ffn.layer_norm, layer.res3.norm)
    spec.decoder.projection.weight = _np(model.generator.weight)
    spec.decoder.projection.bias = np.zeros(model.generator.out_features, dtype=np.float32)
    spec.register_source_vocabulary(list(src_vocab.itos))
    spec.register_target_vocabulary(list(tgt_vocab.itos))
    return spec


def convert(model: Transformer, src_vocab: Vocabulary, tgt_vocab: Vocabulary, out: Path,
            quantization: str | None = None) -> Path:
    """Write the CTranslate2 model directory `out` (model.bin, vocabularies, config.json)."""
    spec = build_spec(model, src_vocab, tgt_vocab)
    spec.validate()
    spec.optimize(quantization=quantization)
    out.mkdir(parents=True, exist_ok=True)
    spec.save(str(out))
    log.info("CTranslate2 model (%s) in %s", quantization or "float32", out)
    return out
