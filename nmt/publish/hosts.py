"""Where the test suite ran: the host records under `bench/results/hosts/`, as docs/pipeline.md's
table (`tested-hosts`) and the README's one line (`tested-hosts-summary`).

`tools/host_record.py` writes one record per CPU and mode after a test run (`.ci/run` does it
after `make test`, mode native, and after `make test-isa`, mode forced: the numerically sensitive
tests with a lower instruction set forced). The blocks list the committed records, so what the
README says the suite passed on is what was recorded, with the CPU, the instruction sets it has
and the ones forced, the commit and the pytest summary.
"""

from __future__ import annotations

from typing import Any

from nmt.publish.sources import Sources, not_yet, table

FOLDER = "hosts"
COMMAND = "make test PYTEST_ARGS='--host-record=bench/results/hosts'"  # .ci/run does it (and for make test-isa)


def _outcome(s: dict[str, Any]) -> str:
    bad = [f"{s[k]} {k}" for k in ("failed", "errors") if s[k]]
    head = f"{s['passed']} passed" + (f", {s['skipped']} skipped" if s["skipped"] else "")
    return f"**{', '.join(bad)}**, {head}" if bad else head


def _changed(files: int | None) -> str:
    return f" with {files} files changed" if files else ""


def _records(s: Sources) -> list[dict[str, Any]]:
    """The committed host records, by file name."""
    folder = s.bench / FOLDER
    names = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
    return [s.result(f"{FOLDER}/{name}") for name in names]


def tested_hosts(s: Sources) -> str:
    records = _records(s)
    if not records:
        return not_yet(FOLDER, COMMAND, f"bench/results/{FOLDER}/*.json")
    rows = []
    for r in records:
        c = r["host"]["cpu"]
        forced = ", ".join(f"`{k}={v}`" for k, v in r["isa_variables"].items()) or "none (native)"
        rows.append([_cpu(c), ", ".join(c["flags"]), forced,
                     r["torch_cpu_capability"] or "", f"`{r['command']}`", _outcome(r["summary"]),
                     f"`{str(r['commit'])[:8]}`{_changed(r.get('uncommitted_files'))}, {r['date'][:10]}"])
    return (table(["CPU", "instruction sets", "ISA forced", "torch kernels", "command", "result", "commit, date"],
                  rows, "lllllll")
            + f"\n\nSource: `bench/results/{FOLDER}/*.json`, one per CPU and mode, written by `pytest "
              "--host-record=bench/results/hosts` (tests/support/host_record.py; `.ci/run` records both of its runs).")


def _cpu(c: dict[str, Any]) -> str:
    family = f" (family {c['family']}, model {c['model_number']})" if c.get("family") else ""
    return f"{c.get('vendor') or ''} {c['model']}{family}".strip()


def tested_hosts_summary(s: Sources) -> str:
    records = _records(s)
    if not records:
        return not_yet(FOLDER, COMMAND, f"bench/results/{FOLDER}/*.json")
    runs = []
    for r in records:
        how = "with AVX2 forced" if r["isa_variables"] else "natively"
        which = "the tests marked isa" if "-m isa" in r["command"] else "the suite"
        runs.append(f"{which} {how} on {_cpu(r['host']['cpu'])}: {_outcome(r['summary'])}")
    return (f"**Tested on**: {'; '.join(runs)}. Source: `bench/results/{FOLDER}/*.json` (the table, with the "
            f"commands and the instruction sets: [docs/pipeline.md](docs/pipeline.md#other-hosts)).")
