"""Prefect orchestration of the DVC pipeline (`flows/pipeline.py`, deployed by `prefect.yaml`).

`pipeline.py` is the flow and its tasks, `dvc_project.py` the DVC side (dvc.yaml stages,
params overrides, running `dvc`), `artifacts.py` the Prefect artifacts every run publishes.

Prefect calls DVC, never the reverse: every task runs one `dvc.yaml` stage through
`dvc repro --single-item`, so DVC decides what is up to date and records lineage in
`dvc.lock`. Nothing here imports the `nmt` package (torch-heavy); the stages run in their
own processes.
"""

import os

# Settings Prefect 3.8 needs on this kind of machine (shared/docs/recipes.md); set before Prefect
# is imported, overridable from the environment: no analytics (else "database is locked"
# tracebacks at start), and time for the ephemeral server's cold start (~13 s).
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "60")
