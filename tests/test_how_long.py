"""How long `make test` and `make repro` take per host, and the fault tests' figures: rendered from records
(tools/publish/hosts.py) that tests/support/host_record.py and bench/repro_time.py write."""

from __future__ import annotations

import json
from pathlib import Path

from bench import repro_time
from tools.publish import hosts
from tools.publish.sources import Sources

INTEL = {"model": "Intel Xeon", "family": "6", "model_number": "207", "cores": 2, "flags": ["avx2"],
         "vendor": "GenuineIntel"}


def host_record(command: str, seconds: float, passed: int, failed: int = 0, faults: tuple[int, int] = (0, 0)) -> dict:
    return {"host": {"cpu": INTEL}, "mode": "native", "isa_variables": {}, "torch_cpu_capability": "AVX512",
            "command": command, "date": "2026-11-28T13:00:00+00:00", "commit": "0123456789abcdef",
            "uncommitted_files": 0, "summary": {"passed": passed, "failed": failed, "errors": 0, "skipped": 3,
                                                "seconds": seconds,
                                                "fault": {"passed": faults[0], "failed": faults[1], "errors": 0}}}


def write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_the_blocks_state_each_hosts_measured_minutes_and_the_faults(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    write(bench / "hosts" / "genuineintel-6-207-intel-xeon-native.json",
          host_record("pytest --randomly-seed=1 -n 2 --dist loadfile", 1250.9, 1400, faults=(30, 0)))
    write(bench / "repro_hosts" / "genuineintel-6-207-intel-xeon.json",
          {"commit": "fedcba9876543210", "date": "2026-11-28T14:00:00+00:00", "machine": {"cpu": INTEL},
           "results": {"cpu": INTEL, "full_estimate_s": 5700.0, "epoch_estimate_s": 281.4, "tokens_per_s": 3012.0}})
    s = Sources(tmp_path / "reports", bench)
    table = hosts.how_long(s)
    assert "| GenuineIntel Intel Xeon (family 6, model 207) | 21 min (1400 passed, 3 skipped; `01234567`" in table
    assert "~95 min (an epoch ~281 s, 3,012 tokens/s; `fedcba98`, 2026-11-28)" in table
    line = hosts.how_long_summary(s)
    assert "GenuineIntel Intel Xeon (family 6, model 207): `make repro` ~95 min through training, `make test` 21 min" \
        in line
    faults = hosts.fault_suite(s)
    assert "**30 fault tests** (kills at named points" in faults and "30 passed; outputs lost: **0**" in faults
    assert hosts.tested_hosts(s).count("GenuineIntel Intel Xeon") == 1


def test_a_failed_fault_test_is_no_claim_that_nothing_was_lost(tmp_path: Path) -> None:
    write(tmp_path / "hosts" / "x-native-faults.json", host_record("pytest -m fault", 80.0, 23, failed=1))
    faults = hosts.fault_suite(Sources(tmp_path, tmp_path))
    assert "**24 fault tests**" in faults and "23 passed, **1 failed**" in faults
    assert "outputs lost: **not shown (a fault test failed)**" in faults


def test_the_repro_estimate_adds_the_remaining_updates_and_validations() -> None:
    stages = {"download": 1.0, "validate": 3.0, "tokenize": 5.0, "vocab": 7.0, "binarize": 2.0, "train": 160.0}
    # one update: (160 - 10) / 299 s; 10,860 - 300 updates more; 20 validations of 4 s (the cut run made none)
    want = sum(stages.values()) + (10860 - 300) * (150 / 299) + 20 * 4.0
    assert repro_time.estimate(stages, 10.0, 4.0, 300, 10860) == want
    assert repro_time.host_name(INTEL) == "genuineintel-6-207-intel-xeon"
