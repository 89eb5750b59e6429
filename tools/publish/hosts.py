"""Where the test suite ran and how long things take there: the host records under
`bench/results/hosts/` as docs/pipeline.md's table (`tested-hosts`) and the README's one line
(`tested-hosts-summary`); with `bench/results/repro_hosts/` (bench/repro_time.py) the time of
`make test` and `make repro` per host (`how-long`, `how-long-summary`); the fault tests' record
as docs/pipeline.md's "when a run dies" figures (`fault-suite`).

`tools/host_record.py` writes one record per CPU and mode after a test run (`.ci/run` does it
after `make test`, mode native, and after `make test-isa`, mode forced: the numerically sensitive
tests with a lower instruction set forced). The blocks list the committed records, so what the
README says the suite passed on is what was recorded, with the CPU, the instruction sets it has
and the ones forced, the commit and the pytest summary.
"""

from __future__ import annotations

from typing import Any

from tools.publish.sources import Sources, not_yet, table

FOLDER = "hosts"
COMMAND = "make test PYTEST_ARGS='--host-record=bench/results/hosts'"  # .ci/run does it (and for make test-isa)
REPRO = "repro_hosts"  # bench/repro_time.py's records, one per CPU
REPRO_COMMAND = "python -m bench.repro_time"
FAULTS_COMMAND = "make test-faults PYTEST_ARGS='--host-record=bench/results/hosts'"


def _outcome(s: dict[str, Any]) -> str:
    bad = [f"{s[k]} {k}" for k in ("failed", "errors") if s[k]]
    head = f"{s['passed']} passed" + (f", {s['skipped']} skipped" if s["skipped"] else "")
    return f"**{', '.join(bad)}**, {head}" if bad else head


def _changed(files: int | None) -> str:
    return f" with {files} files changed" if files else ""


def _records(s: Sources, folder_name: str = FOLDER) -> list[dict[str, Any]]:
    """The committed records of a folder of bench/results, by file name."""
    folder = s.bench / folder_name
    names = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
    return [s.result(f"{folder_name}/{name}") for name in names]


def _whole_suite(r: dict[str, Any]) -> bool:
    """A record of the whole suite as `make test` runs it (no marker selected)."""
    return r["mode"] == "native" and " -m " not in f" {r['command']} "


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min"


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


def _repros(s: Sources) -> dict[str, dict[str, Any]]:
    """CPU -> its `make repro` estimate (results, commit, date): bench/repro_time.py's records, and the
    current side of bench/repro_compare.py's run (the same estimate, made on its host)."""
    out = {_cpu(r["results"]["cpu"]): {**r["results"], "commit": r["commit"], "date": r["date"]}
           for r in _records(s, REPRO)}
    if (s.bench / "repro_compare.json").is_file():
        r = s.result("repro_compare")
        now = r["results"]["sides"]["now"]
        epoch = now["per_update_s"] * r["results"]["full_updates"] / 20
        out.setdefault(_cpu(r["machine"]["cpu"]), {"full_estimate_s": now["full_estimate_s"], "epoch_estimate_s": epoch,
                                                   "tokens_per_s": now["tokens_per_s"], "commit": r["commit"],
                                                   "date": r["date"]})
    return out


def _timings(s: Sources) -> list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]:
    """(CPU, its whole-suite test record, its `make repro` estimate) for every CPU with either."""
    tests = {_cpu(r["host"]["cpu"]): r for r in _records(s) if _whole_suite(r)}
    repros = _repros(s)
    return [(name, tests.get(name), repros.get(name)) for name in sorted({*tests, *repros})]


def how_long(s: Sources) -> str:
    """docs/pipeline.md: `make test` (a whole-suite record) and `make repro` (bench/repro_time.py) per CPU."""
    timings = _timings(s)
    if not timings:
        return not_yet(REPRO, REPRO_COMMAND, f"bench/results/{REPRO}/*.json")
    rows = []
    for name, t, r in timings:
        rows.append([name,
                     f"{_minutes(t['summary']['seconds'])} ({_outcome(t['summary'])}; `{str(t['commit'])[:8]}`, "
                     f"{t['date'][:10]})" if t else "not recorded",
                     f"~{_minutes(r['full_estimate_s'])} (an epoch ~{r['epoch_estimate_s']:.0f} s, "
                     f"{r['tokens_per_s']:,.0f} tokens/s; `{str(r['commit'])[:8]}`, {r['date'][:10]})" if r
                     else "not recorded"])
    return (table(["CPU (2 cores)", "`make test`", "`make repro` through training (estimate)"], rows, "lll")
            + "\n\n`make test`: the whole suite's wall time in its host record (`pytest --host-record`, "
              "tests/support/host_record.py). `make repro`: `python -m bench.repro_time` runs every stage through "
              "train with training cut to a few hundred updates and adds the rest of the committed run's updates "
              "and validations at the measured pace; the stages after train add a few minutes. "
              f"Source: `bench/results/{FOLDER}/*.json`, `bench/results/{REPRO}/*.json`, "
              "`bench/results/repro_compare.json` (its current side; its estimate leaves out the 20 validations, "
              "a few minutes).")


def how_long_summary(s: Sources) -> str:
    """The README's line: the same figures, one clause per CPU."""
    timings = _timings(s)
    if not timings:
        return not_yet(REPRO, REPRO_COMMAND, f"bench/results/{REPRO}/*.json")
    parts = []
    for name, t, r in timings:
        said = ([f"`make repro` ~{_minutes(r['full_estimate_s'])} through training"] if r else []) + \
               ([f"`make test` {_minutes(t['summary']['seconds'])}"] if t else [])
        parts.append(f"{name}: {', '.join(said)}")
    return (f"**How long, per host** (2 cores): {'; '.join(parts)}. Per-core speed differs by up to about threefold "
            "between the hosts this project runs on, so measure yours with `python -m bench.repro_time` ([how the "
            "figures are "
            f"made](docs/pipeline.md#how-long-it-takes)). Source: `bench/results/{FOLDER}/*.json`, "
            f"`bench/results/{REPRO}/*.json`, `bench/results/repro_compare.json`.")


def fault_suite(s: Sources) -> str:
    """docs/pipeline.md's "when a run dies": the tests marked fault in each whole-suite record (`make test`
    counts them apart), or in a record of `make test-faults`."""
    lines = []
    for r in _records(s):
        m = r["summary"]["fault"] if _whole_suite(r) and r["summary"].get("fault") else \
            r["summary"] if " -m fault " in f" {r['command']} " else None
        if not m:
            continue
        tried = m["passed"] + m["failed"] + m["errors"]
        bad = m["failed"] + m["errors"]
        lost = "0" if not bad else "not shown (a fault test failed)"
        lines.append(f"- {_cpu(r['host']['cpu'])}: **{tried} fault tests** (kills at named points of each write "
                     f"window, damaged files, a full disk, a drain), {tried - bad} passed"
                     f"{f', **{bad} failed**' if bad else ''}; outputs lost: **{lost}** (`{str(r['commit'])[:8]}`, "
                     f"{r['date'][:10]}, `{r['command']}`)")
    if not lines:
        return not_yet(FOLDER, FAULTS_COMMAND, f"bench/results/{FOLDER}/*.json")
    return "\n".join(lines) + f"\n\nSource: `bench/results/{FOLDER}/*.json` (the tests marked fault in each record)."
