"""The layout rules the tree keeps (docs/pipeline.md: Design): checked with `ast`, nothing is run.

- Each dvc.yaml stage lists exactly the `nmt/` code its command runs (folders stand for every
  file below them), so an edit re-runs exactly the stages that use it; a stage reads only its own
  params sections, so a new section's config module re-runs no stage (a 25-minute retrain included).
- `nmt/text`, `nmt/runtime` and everything they import never import torch.
- Data flows one way: a package imports only from packages of earlier pipeline parts; no cycles.
- No file in `nmt/` or `flows/` is over 300 lines.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from tools.imports import ROOT, closure, direct_imports, expand, module_file

PIPELINES = ("dvc.yaml", "general/dvc.yaml", "pairs/dvc.yaml", "finetune/dvc.yaml")  # the default and three more
STAGES = {f"{file}:{name}": body.get("do", body) for file in PIPELINES  # a foreach stage: its `do`, once
          for name, body in yaml.safe_load((ROOT / file).read_text())["stages"].items()}
# pipeline order: a module may import from its own part and earlier ones only
ORDER = ["errors", "ranking", "files", "config", "command", "gates", "text", "data", "model", "decode", "runtime",
         "translate", "train", "finetune", "evaluate", "export", "serve", "drift", "adapt", "cli"]
TORCH_FREE = ("nmt/text", "nmt/runtime", "nmt/translate", "nmt/serve", "nmt/drift", "tools/publish")
# nmt/serve/<room>/: a room imports only from itself and the rooms before it; only `api` speaks HTTP
ROOMS = ["observe", "dispatch", "api"]
WEB = {"starlette", "uvicorn", "h11", "multipart", "python_multipart"}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "errors"  # `nmt` itself: the version, nothing else


def _modules() -> list[str]:
    return sorted(".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                  for p in (ROOT / "nmt").rglob("*.py") if "__pycache__" not in p.parts)


def _entry(cmd: str) -> str:
    match = re.match(r"python -m ([\w.]+)", " ".join(cmd.split()))
    assert match, f"stage command {cmd!r} does not run `python -m MODULE`"
    return match.group(1)


@pytest.mark.parametrize("stage", list(STAGES))
def test_stage_deps_are_exactly_the_code_its_command_runs(stage: str) -> None:
    body = STAGES[stage]
    runs = closure(_entry(body["cmd"]))
    declared = [d for d in body["deps"] if d.startswith(("nmt/", "tools/"))]
    listed = expand(declared)
    missing = sorted(str(p.relative_to(ROOT)) for p in runs - listed)
    extra = sorted(str(p.relative_to(ROOT)) for p in listed - runs)
    assert not missing, f"dvc.yaml stage {stage!r} runs but does not list: {missing}"
    assert not extra, f"dvc.yaml stage {stage!r} lists code it never runs: {extra}"
    assert all((ROOT / d).exists() for d in declared)


@pytest.mark.parametrize("stage", list(STAGES))
def test_a_new_params_section_reruns_no_stage(stage: str) -> None:
    """A new stage's section means a new module in nmt/config and a field of `Params`: a stage whose
    deps take in the whole folder, or whose code loads the whole file (`nmt.config.params`), would
    re-run for it."""
    new_section = ROOT / "nmt" / "config" / "new_section.py"  # not created: where it would go
    covering = [d for d in STAGES[stage]["deps"] if new_section.is_relative_to(ROOT / d) and (ROOT / d).is_dir()]
    assert not covering, f"dvc.yaml stage {stage!r} depends on the folder(s) {covering}: list its config modules"
    runs = closure(_entry(STAGES[stage]["cmd"]))
    assert ROOT / "nmt" / "config" / "params.py" not in runs, \
        f"stage {stage!r} imports nmt.config.params (every section); load its own sections with load_sections"


def _imports_torch(path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if any(n == "torch" or n.startswith("torch.") for n in names):
            return True
    return False


@pytest.mark.parametrize("folder", TORCH_FREE)
def test_torch_free_folders_never_import_torch(folder: str) -> None:
    for path in sorted((ROOT / folder).rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        offenders = sorted(str(p.relative_to(ROOT)) for p in closure(module) if _imports_torch(p))
        assert not offenders, f"{module} is torch-free but runs {offenders}, which import torch"


def test_the_torch_free_rule_sees_an_offender() -> None:
    assert _imports_torch(ROOT / "nmt/decode/backend.py")
    assert any(_imports_torch(p) for p in closure("nmt.decode.translator"))


def test_imports_flow_one_way_through_the_pipeline() -> None:
    for module in _modules():
        part = _part(module)
        assert part.removesuffix(".py") in ORDER, \
            f"{module}: unknown part {part!r}; add it to ORDER and docs/pipeline.md"
        for imported in direct_imports(module_file(module)):
            ahead = ORDER.index(_part(imported)) > ORDER.index(part)
            assert not ahead, f"{module} imports {imported}, a later part of the pipeline"


def test_the_server_rooms_import_only_the_rooms_before_them_and_only_the_api_speaks_http() -> None:
    serve = ROOT / "nmt" / "serve"
    loose = sorted(p.name for p in serve.glob("*.py") if p.name != "__init__.py")
    assert not loose, f"modules outside the rooms of nmt/serve/ ({ROOMS}): {loose}"
    for path in sorted(serve.rglob("*.py")):
        parts = path.relative_to(serve).parts
        if len(parts) == 1:
            continue
        room = parts[0]
        assert room in ROOMS, f"{path}: unknown room {room!r}; add it to ROOMS and nmt/serve/__init__.py"
        for imported in direct_imports(path):
            if imported.startswith("nmt.serve."):
                other = imported.split(".")[2]
                assert ROOMS.index(other) <= ROOMS.index(room), \
                    f"{path} ({room}) imports {imported} ({other}), a later room"
        if room != "api":
            tree = ast.parse(path.read_text(encoding="utf-8"))
            third = {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
            third |= {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            assert not third & WEB, f"{path} ({room}) imports {sorted(third & WEB)}: only nmt/serve/api/ speaks HTTP"


def test_no_import_cycles() -> None:
    graph = {m: {i for i in direct_imports(module_file(m)) if not m.startswith(i + ".")} for m in _modules()}
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(module):] + [module]))
        if module in done:
            return
        for nxt in graph.get(module, ()):
            visit(nxt, path + [module])
        done.add(module)

    for module in graph:
        visit(module, [])


def test_no_file_over_300_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for folder in ("nmt", "flows") for p in (ROOT / folder).rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 300}
    assert not long, f"split these by concept: {long}"


# The text path's pieces (nmt/translate/): outside that package only its drivers call them. Everything else
# translates through `nmt.translate.local` (in this process) or the server's `run` (its batcher decodes).
PATH_PIECES = {"translate_sentences", "SentenceSplitter", "Splitters", "mask_sentences", "mask_terms", "mask",
               "split_and_mask", "put_pairs", "restore_all", "plain_texts", "model_texts", "terms_restored",
               "to_model", "align_pairs", "with_pairs", "prepare", "finish", "translate_texts"}
PATH_DRIVERS = {
    ("nmt/serve/dispatch/batcher.py", "translate_sentences"),  # the server's decode step, a batch at a time
    ("nmt/serve/api/translating.py", "prepare"), ("nmt/serve/api/translating.py", "finish"),  # the server's driver
    ("nmt/serve/api/state.py", "Splitters"),  # its text threads' sentence splitters, for `prepare`
    ("nmt/data/sentences.py", "Splitters"),  # training paragraphs cut by the one splitter, as texts are served
    ("nmt/drift/stage.py", "mask"),  # counts source pieces as the server masks them, without decoding
    ("nmt/drift/stage.py", "translate_sentences"),  # the dev sample through the server's decode step
}


def _calls(path: Path) -> set[str]:
    """The text path's pieces this file imports from nmt.translate and uses (calls, or hands to a thread)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    imported = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and ((node.module or "").startswith("nmt.translate") or node.module == "nmt.text.sentences")
                for a in node.names if a.name in PATH_PIECES}
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id in imported}


def test_no_copy_of_the_text_path_outside_nmt_translate() -> None:
    """The CLI, the server, the drift check, the flows and the benches drive the one path; none rebuilds it."""
    found = set()
    for folder in ("nmt", "flows", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith("nmt/translate/"):
                found |= {(rel, name) for name in _calls(path)}
    assert found <= PATH_DRIVERS, f"the text path rebuilt outside nmt/translate/: {sorted(found - PATH_DRIVERS)}"
    assert found == PATH_DRIVERS, f"drivers listed that no longer call the piece: {sorted(PATH_DRIVERS - found)}"


def test_torch_is_reached_by_name_only_to_open_a_model_file() -> None:
    """`nmt.translate.models` imports the torch translator by name, inside the function that opens a `.pt`
    file: the AST rule above cannot see that import, so it is the one allowed, and no other by-name import
    appears in the torch-free folders."""
    by_name = sorted(p.relative_to(ROOT).as_posix() for folder in TORCH_FREE for p in (ROOT / folder).rglob("*.py")
                     if "import_module(" in p.read_text(encoding="utf-8"))
    assert by_name == ["nmt/translate/models.py"]
    from nmt.translate import models

    assert models.TORCH_TRANSLATOR == "nmt.decode.translator"
    assert any(_imports_torch(p) for p in closure(models.TORCH_TRANSLATOR))


def test_the_drift_check_runs_no_server_code() -> None:
    """The traffic record schema (nmt/translate/traffic.py) is shared without the profile stage and the drift
    flow depending on nmt/serve/."""
    for path in sorted((ROOT / "nmt" / "drift").glob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        served = sorted(str(p.relative_to(ROOT)) for p in closure(module) if "serve" in p.relative_to(ROOT).parts)
        assert not served, f"{module} runs server code: {served}"
