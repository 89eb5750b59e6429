"""tools/gpu/mfu.py: its FLOP count by hand, and its steps on the CPU (--smoke);
its figures come from a lent GPU."""

from __future__ import annotations

import json
from pathlib import Path

from nmt.config.model import ModelConfig
from tools.gpu.mfu import BASE, main, step_flops


def test_the_flop_count_is_the_sum_of_the_matrix_products() -> None:
    one = ModelConfig(n_layers=1, d_model=2, n_heads=1, d_ff=4, max_len=16)
    s, t, v = 3, 5, 7
    encoder = 4 * 2 * s * 2 * 2 + 2 * 2 * s * s * 2 + 2 * 2 * s * 2 * 4  # q, k, v, o; QK^T and AV; two FFN products
    decoder = (4 * 2 * t * 2 * 2 + 2 * 2 * t * t * 2  # self-attention
               + 2 * 2 * t * 2 * 2 + 2 * 2 * s * 2 * 2 + 2 * 2 * t * s * 2  # cross: q, o on T; k, v on S; scores
               + 2 * 2 * t * 2 * 4)  # FFN
    assert step_flops(one, 1, s, t, v) == 3 * (encoder + decoder + 2 * t * 2 * v)
    assert step_flops(BASE, 10, 32, 32, 8000) == 10 * step_flops(BASE, 1, 32, 32, 8000)


def test_the_smoke_run_measures_every_step_and_writes_its_result(tmp_path: Path) -> None:
    assert main(["--smoke", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "gpu_mfu.json").read_text())["results"]
    assert res["smoke"] is True and res["peak_flops_per_s"] > 0 and res["largest_batch_tokens"] >= 256
    eager, chunked = res["variants"]  # no torch.compile on the CPU; the loss whole, then in chunks
    assert eager["compile"] is False and eager["tokens_per_s"] > 0 and 0 < eager["mfu"] == eager["flops_per_s"] / \
        res["peak_flops_per_s"]
    assert (eager["loss_chunk"], chunked["loss_chunk"]) == (0, 64) and chunked["tokens_per_s"] > 0
