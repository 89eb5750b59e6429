"""Prefect orchestration of the DVC pipeline: `pipeline.py` is the flow (deployed by
`prefect.yaml`), `dvc_project.py` the DVC side, `artifacts.py` what every run publishes,
`tools.py` how dvc (`python -m dvc`, this interpreter) and git are started.

Prefect calls DVC, never the reverse: each task runs one dvc.yaml stage through
`dvc repro --single-item`, so DVC decides what is up to date and keeps lineage in dvc.lock.
Nothing here imports torch; gate reports are read with the torch-free `nmt.gates.reports`.
Prefect's settings for this project are in `prefect.toml` (repository root).
"""
