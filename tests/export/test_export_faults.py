"""The export stage out of disk space: one line naming the graph being written, not advice about the opset."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
import torch

from nmt.config.model import ModelConfig
from nmt.errors import NmtError, OutOfSpace
from nmt.export import graphs
from nmt.model.transformer import build_model
from nmt.text.vocab import SPECIALS, Vocabulary

pytestmark = pytest.mark.fault
VOCAB = Vocabulary(list(SPECIALS) + [f"w{i}" for i in range(20)])


def model() -> torch.nn.Module:
    return build_model(ModelConfig(n_layers=1, d_model=16, n_heads=2, d_ff=32, max_len=32), VOCAB, VOCAB).eval()


def test_a_full_disk_in_the_exporter_is_out_of_space_naming_the_graph(tmp_path: Path, monkeypatch) -> None:
    def full(*args, **kwargs):
        try:
            raise OSError(errno.ENOSPC, "No space left on device", str(args[2]))
        except OSError as exc:
            raise RuntimeError("serialising the model failed") from exc  # the exporter wraps what it meets

    monkeypatch.setattr(torch.onnx, "export", full)
    with pytest.raises(OutOfSpace, match=r"encoder.onnx: out of disk space while writing it .* Free space"):
        graphs.export_graphs(model(), tmp_path, 20)


def test_another_exporter_error_still_points_at_the_opset(tmp_path: Path, monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("unsupported operator")

    monkeypatch.setattr(torch.onnx, "export", broken)
    with pytest.raises(NmtError, match=r"ONNX export of the encoder graph failed .*check export.opset") as err:
        graphs.export_graphs(model(), tmp_path, 20)
    assert not isinstance(err.value, OutOfSpace)
