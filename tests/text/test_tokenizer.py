"""The tokenizer loads spaCy without torch, so a runtime process stays torch-free."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, sys
from nmt.text.tokenizer import make_tokenizer
tokens = list(make_tokenizer("de", False)(["Ein Hund läuft."]))
hidden = "torch" in sys.modules
import torch  # a later import works as usual
print(json.dumps({"tokens": tokens[0][0], "torch_after_tokenizer": hidden, "torch_later": torch.ones(1).item()}))
"""


def test_spacy_loads_without_torch_and_torch_still_imports_later() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True).stdout
    got = json.loads(out)
    assert got == {"tokens": ["Ein", "Hund", "läuft", "."], "torch_after_tokenizer": False, "torch_later": 1.0}
