"""bench/distill_select.py: each rule's chosen targets scored against the references of the dev lines
only, the systems alone beside them, and the template counts of the lines without a reference."""

from __future__ import annotations

from pathlib import Path

from bench.distill_select import measure_set

REF = ["The cat sleeps on the sofa.", "A dog runs across the green meadow.", "NO TRANSLATION AVAILABLE",
       "NO TRANSLATION AVAILABLE", "NO TRANSLATION AVAILABLE"]
SRC = ["Die Katze schläft auf dem Sofa.", "Ein Hund rennt über die grüne Wiese.", "Zimmer 12 ist frei.",
       "Zimmer 7 ist frei.", "Zimmer 3 ist frei."]
SYSTEMS = {
    "good": ["The cat sleeps on the sofa.", "A dog runs across the green meadow.", "Room 12 is free.",
             "Room 7 is free.", "Room 3 is free."],
    "close": ["The cat is sleeping on the sofa.", "A dog runs over the green meadow.", "Room 12 is free.",
              "Room 7 is free.", "Room 3 is free."],
    "off": ["Die Katze schläft auf dem Sofa.", "I cannot translate this.", "Room 12 is vacant.", "Room seven.",
            "Free."],
}


def write(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "set.de-en.src.de").write_text("\n".join(SRC) + "\n", encoding="utf-8")
    (folder / "set.de-en.ref.refA.en").write_text("\n".join(REF) + "\n", encoding="utf-8")
    for name, lines in SYSTEMS.items():
        (folder / f"set.de-en.hyp.{name}.en").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_rules_are_scored_on_the_referenced_lines_and_consensus_avoids_the_outlier(tmp_path: Path) -> None:
    write(tmp_path)
    r = measure_set(tmp_path, "set.de-en", "en", ["refA"])
    assert r["systems"] == ["close", "good", "off"] and r["dev_lines"] == 2 and r["best_system"] == "good"
    rules = r["rules"]
    assert rules["all"]["targets_per_line"] == 3 and rules["consensus"]["targets_per_line"] == 1
    assert rules["top_2"]["targets_per_line"] == 2
    assert rules["consensus"]["chrf"] > rules["all"]["chrf"]  # the copy and the refusal are never the consensus
    assert rules["consensus"]["chrf"] > r["systems_alone"]["off"]["chrf"]
    assert rules["consensus"]["signature"].startswith("nrefs:1")
    # the three test-suite lines share one template ("zimmer 0 ist frei"): two over a limit of 1
    assert (r["training_lines"], r["templates"], r["lines_in_repeated_templates"]) == (3, 1, 3)
    assert r["lines_over_template"] == {1: 2, 2: 1, 4: 0}
