"""Our Transformer as a Hugging Face transformers MarianMT model: `MarianMTModel` and `MarianTokenizer` load it.

MarianMT is the original Transformer as we train it (Vaswani et al. 2017, section 3): post-norm residual
blocks, sinusoidal positions, embeddings scaled by sqrt(d_model), ReLU feed-forward layers, separate or shared
embeddings tied to the output projection. What differs is bookkeeping, handled here:

- Marian's positional table puts every sine in the first half of the features and every cosine in the
  second; ours interleaves them (3.5). The residual stream's features are permuted so that Marian's table
  is ours: each weight that reads the stream takes its columns in that order, each weight that writes it
  its rows, each LayerNorm its entries. LayerNorm, attention and the feed-forward layers commute with a
  permutation of their features, so the model computes the same function, up to float summation order.
- Our fused key/value projection becomes Marian's k_proj and v_proj.
- Text: `MarianTokenizer` turns text into SentencePiece pieces (`source.spm`, `target.spm`: the model's own
  `sentencepiece.model`), then ids by `vocab.json` (the pieces in our id order), then appends </s>, which
  is our source exactly; the decoder starts from <s>, stops at </s>, pads with <pad> (ids 2, 3, 0).
Only a SentencePiece model (`vocab.kind: sentencepiece`), post-norm and cased, can be written:
`check_exportable` says which setting to change otherwise. `transformers` writes and re-reads the folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from nmt.errors import DataError, NmtError
from nmt.export.modelcard import check_portable
from nmt.files.atomic import atomic_write_text
from nmt.model.transformer import Transformer
from nmt.text.spm import SentencePiece
from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID, SPECIALS
from nmt.text.vocabularies import Vocabularies

INSTALL = "nmt export-hf needs transformers: pip install transformers"
FILES = ("config.json", "generation_config.json", "model.safetensors", "source.spm", "target.spm", "vocab.json",
         "tokenizer_config.json", "special_tokens_map.json", "README.md")


def check_exportable(vocabs: Vocabularies, model: Transformer, lowercase: bool, what: str) -> SentencePiece:
    """The model's SentencePiece model; a one-line DataError naming the setting when `what` cannot hold it."""
    check_portable(vocabs.sp is not None, lowercase, what)
    if model.cfg.norm_first:
        raise DataError(f"{what}: MarianMT is post-norm only, and this model is pre-norm (model.norm_first: true); "
                        "train it post-norm (model.norm_first: false, the paper's) or use the ONNX package")
    assert vocabs.sp is not None
    return vocabs.sp


def residual_order(d_model: int) -> Tensor:
    """Marian's feature j holds our feature order[j]: the sines (ours at even j) first, the cosines after."""
    return torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])


def marian_weights(model: Transformer) -> dict[str, Tensor]:
    """Our weights under MarianMTModel's names, the residual stream permuted (`residual_order`)."""
    p = residual_order(model.cfg.d_model)
    out: dict[str, Tensor] = {}

    def reads(name: str, linear: nn.Linear, rows: slice = slice(None)) -> None:  # input is the stream
        out[f"{name}.weight"] = linear.weight[rows][:, p]
        out[f"{name}.bias"] = linear.bias[rows]

    def writes(name: str, linear: nn.Linear) -> None:  # output is the stream
        out[f"{name}.weight"], out[f"{name}.bias"] = linear.weight[p], linear.bias[p]

    def norm(name: str, layer: nn.LayerNorm) -> None:
        out[f"{name}.weight"], out[f"{name}.bias"] = layer.weight[p], layer.bias[p]

    def attention(name: str, attn: Any) -> None:
        d = model.cfg.d_model
        reads(f"{name}.q_proj", attn.q_proj)
        reads(f"{name}.k_proj", attn.kv_proj, slice(0, d))
        reads(f"{name}.v_proj", attn.kv_proj, slice(d, 2 * d))
        writes(f"{name}.out_proj", attn.out_proj)

    def ffn(name: str, layer: Any) -> None:
        reads(f"{name}.fc1", layer.ffn.w1)
        writes(f"{name}.fc2", layer.ffn.w2)

    out["model.encoder.embed_tokens.weight"] = model.src_embed.weight[:, p]
    out["model.decoder.embed_tokens.weight"] = model.tgt_embed.weight[:, p]
    if model.cfg.tie_source:
        out["model.shared.weight"] = out["model.encoder.embed_tokens.weight"]
    for i, enc in enumerate(model.encoder):
        name = f"model.encoder.layers.{i}"
        attention(f"{name}.self_attn", enc.self_attn)
        norm(f"{name}.self_attn_layer_norm", enc.res1.norm)
        ffn(name, enc)
        norm(f"{name}.final_layer_norm", enc.res2.norm)
    for i, dec in enumerate(model.decoder):
        name = f"model.decoder.layers.{i}"
        attention(f"{name}.self_attn", dec.self_attn)
        norm(f"{name}.self_attn_layer_norm", dec.res1.norm)
        attention(f"{name}.encoder_attn", dec.cross_attn)
        norm(f"{name}.encoder_attn_layer_norm", dec.res2.norm)
        ffn(name, dec)
        norm(f"{name}.final_layer_norm", dec.res3.norm)
    out["lm_head.weight"] = model.generator.weight[:, p]
    out["final_logits_bias"] = torch.zeros(1, model.generator.out_features)
    return {k: v.detach().float().contiguous().clone() for k, v in out.items()}


def marian_config(model: Transformer, n_src: int, n_tgt: int) -> dict[str, Any]:
    """MarianConfig's fields for `model` (dropouts as trained; they do nothing at inference)."""
    cfg = model.cfg
    return {"vocab_size": n_src, "decoder_vocab_size": n_tgt, "d_model": cfg.d_model,
            "encoder_layers": cfg.n_layers, "decoder_layers": cfg.n_layers,
            "encoder_attention_heads": cfg.n_heads, "decoder_attention_heads": cfg.n_heads,
            "encoder_ffn_dim": cfg.d_ff, "decoder_ffn_dim": cfg.d_ff, "activation_function": "relu",
            "max_position_embeddings": cfg.max_len, "scale_embedding": True, "dropout": cfg.dropout,
            "attention_dropout": cfg.attn_dropout, "activation_dropout": 0.0,
            "share_encoder_decoder_embeddings": cfg.tie_source, "tie_word_embeddings": cfg.tie_output,
            "pad_token_id": PAD_ID, "bos_token_id": BOS_ID, "eos_token_id": EOS_ID,
            "decoder_start_token_id": BOS_ID, "forced_eos_token_id": None}


def _transformers() -> Any:
    try:
        import transformers
    except ImportError as exc:
        raise NmtError(INSTALL) from exc
    return transformers


def write_marian(model: Transformer, vocabs: Vocabularies, sp: SentencePiece, out: Path,
                 generation: dict[str, Any]) -> None:
    """The MarianMT folder in `out` (weights, config, tokenizer files, generation defaults); no README."""
    tf = _transformers()
    config = tf.MarianConfig(**marian_config(model, len(vocabs.src), len(vocabs.tgt)))
    hf = tf.MarianMTModel(config).eval()
    weights = marian_weights(model)
    missing, unexpected = hf.load_state_dict(weights, strict=False)
    missing = [k for k in missing if not k.endswith("embed_positions.weight") and k not in weights]
    if missing or unexpected:  # a transformers release that renamed Marian's weights
        raise NmtError(f"transformers {tf.__version__}: MarianMTModel's weights do not match ours "
                       f"(missing {missing[:3]}, unexpected {unexpected[:3]})")
    hf.generation_config = tf.GenerationConfig(
        decoder_start_token_id=BOS_ID, bos_token_id=BOS_ID, eos_token_id=EOS_ID, pad_token_id=PAD_ID,
        forced_eos_token_id=None, **generation)
    hf.save_pretrained(str(out), safe_serialization=True)
    for name in ("source.spm", "target.spm"):
        sp.save(out / name)
    if vocabs.src != vocabs.tgt:
        raise DataError("MarianTokenizer needs one SentencePiece vocabulary for both sides (vocab.joint: true)")
    atomic_write_text(out / "vocab.json", json.dumps({s: i for i, s in enumerate(vocabs.src.itos)},
                                                     ensure_ascii=False, indent=0) + "\n")
    pad, unk, _, eos = SPECIALS
    atomic_write_text(out / "tokenizer_config.json", json.dumps(
        {"tokenizer_class": "MarianTokenizer", "source_lang": vocabs.src_lang, "target_lang": vocabs.tgt_lang,
         "separate_vocabs": False, "model_max_length": model.cfg.max_len, "pad_token": pad, "unk_token": unk,
         "eos_token": eos}, indent=1) + "\n")
    atomic_write_text(out / "special_tokens_map.json", json.dumps(
        {"pad_token": pad, "unk_token": unk, "eos_token": eos}, indent=1) + "\n")
