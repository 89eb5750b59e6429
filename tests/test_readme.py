"""What the README and its docs/ pages promise a new user, where no code can check it (issue 15).

Each check reads the file where its text lives since the README was split (issue 28)."""

from __future__ import annotations

import re

from support.corpus import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
LIFECYCLE = (ROOT / "docs" / "lifecycle.md").read_text(encoding="utf-8")


def test_the_two_set_up_commands_come_first() -> None:
    setup = README[README.index("## Set up"):README.index("## Usage")]
    assert "make repro" in setup and "make test" in setup


def test_a_prefect_server_on_another_port_is_shown_with_its_ui_api_url() -> None:
    """The UI calls port 4200 unless PREFECT_UI_API_URL says otherwise (docs/lifecycle.md)."""
    block = LIFECYCLE[LIFECYCLE.index("prefect server start"):][:600]
    port = re.search(r"--port (\d+)", block[40:]).group(1)
    assert port != "4200" and f"PREFECT_UI_API_URL=http://127.0.0.1:{port}/api" in block


def test_scores_say_they_are_machine_dependent() -> None:
    """The caveat stays next to the scores (its figures come from no committed result, so it has none)."""
    results = README[README.index("## Results"):README.index("## Documentation")]
    assert "These numbers depend on the machine" in results and "reports/experiments.md" in results
