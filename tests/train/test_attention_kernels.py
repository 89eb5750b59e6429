"""train.cudnn_attention: which scaled-dot-product attention kernels a training run may use."""

from __future__ import annotations

import torch

from nmt.train.run import attention_kernels


def flags() -> tuple[bool, bool, bool, bool]:
    b = torch.backends.cuda
    return b.cudnn_sdp_enabled(), b.flash_sdp_enabled(), b.mem_efficient_sdp_enabled(), b.math_sdp_enabled()


def test_on_cuda_cudnn_attention_is_off_inside_the_run_and_restored_after() -> None:
    before = flags()
    assert before[0], "torch allows cuDNN attention by default (else this test tests nothing)"
    with attention_kernels(torch.device("cuda"), cudnn=False):
        assert flags() == (False, True, True, True)
    assert flags() == before


def test_asked_for_or_off_cuda_torch_keeps_its_own_pick() -> None:
    before = flags()
    for device, cudnn in ((torch.device("cuda"), True), (torch.device("cpu"), False)):
        with attention_kernels(device, cudnn):
            assert flags() == before
