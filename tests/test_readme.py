"""What the README and its docs/ pages promise a new user, where no code can check it.

Each check reads the file where its text lives since the README was split."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from support.corpus import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
LIFECYCLE = (ROOT / "docs" / "lifecycle.md").read_text(encoding="utf-8")
SERVING = (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")


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


def test_the_switch_after_a_promotion_works_at_every_promotion(tmp_path: Path) -> None:
    """docs/serving.md's fetch-and-switch lines, run three times with stand-ins for `dvc` and
    `systemctl` (shell functions, so neither command runs): each time `nmt-onnx` is the new
    package and `nmt-onnx.old` the one before, never a folder nested in the last `.old`."""
    fenced = re.findall(r"```bash\n(.*?)```", SERVING, re.S)
    inline = [" ".join(c.split()) for c in re.findall(r"`([^`]+)`", re.sub(r"```.*?```", "", SERVING, flags=re.S))]
    recipe = next(c for c in fenced + inline if "nmt-onnx.old" in c and "artifacts get" in c)
    srv = tmp_path / "srv" / "nmt"
    (srv / "nmt-onnx").mkdir(parents=True)
    (srv / "nmt-onnx" / "model.json").write_text("0")
    stand_ins = ('dvc() { local out; while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done; '
                 'mkdir "$out" && echo "$VERSION" > "$out/model.json"; }\nsystemctl() { :; }\n')
    for version in ("1", "2", "3"):
        run = subprocess.run(["bash", "-c", "set -e\n" + stand_ins + recipe.replace("/srv/nmt", str(srv))],
                             env={"PATH": "/usr/bin:/bin", "VERSION": version}, capture_output=True, text=True,
                             check=False)
        assert run.returncode == 0, run.stderr
        assert sorted(p.name for p in srv.iterdir()) == ["nmt-onnx", "nmt-onnx.old"]
        assert (srv / "nmt-onnx" / "model.json").read_text().strip() == version
        assert sorted(p.name for p in (srv / "nmt-onnx.old").iterdir()) == ["model.json"]
        assert (srv / "nmt-onnx.old" / "model.json").read_text().strip() == str(int(version) - 1)
