"""Small files of a systems set for the data tests: a German source of five lines (a near duplicate
among them), three systems' English outputs, a reference file with test-suite lines without one."""

from __future__ import annotations

from pathlib import Path

from nmt.config.systems import NO_REFERENCE

SRC = ["Der Zug kommt um 8 Uhr an. Er ist pünktlich.",
       "Die Katze schläft auf dem Sofa.",
       "Raum 12 ist frei.",
       "raum 7 ist frei",  # the template of line 3: a near duplicate
       "Sie sollen lesen."]
HYPS = {"A": ["The train arrives at 8 am. It is punctual.", "The cat sleeps on the sofa.", "Room 12 is free.",
              "room 7 is free", "They should read."],
        "B": ["The train arrives at 8 o'clock. It is on time.", "The cat is sleeping on the sofa.",
              "Room 12 is available.", "room 7 is free", "They are to read."],
        "C": ["The train arrives at 8 and it is on time, as always.", "Le chat dort sur le canapé.",
              "Raum 12 ist frei.", "room 7 is vacant", "They should read."]}
REF = ["The train arrives at 8 o'clock. It is on time.", "The cat sleeps on the sofa.", *[NO_REFERENCE] * 3]
HYP_FILES = [f"src.hyp.{name}.en" for name in HYPS]


def write(folder: Path, name: str, lines: list[str]) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(f"{s}\n" for s in lines), encoding="utf-8")
    return name


def write_set(folder: Path) -> None:
    write(folder, "src.de", SRC)
    write(folder, "ref.en", REF)
    for name, lines in HYPS.items():
        write(folder, f"src.hyp.{name}.en", lines)
