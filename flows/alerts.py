"""Failure you hear about: Prefect automations that call a webhook when a pipeline run fails,
crashes, or ends `Not promoted` (a challenger worse than the model in production), and when a
drift check (flows/drift.py) ends `Drifted` (the served traffic no longer looks like the
training data) or fails.

The Prefect server runs them (its triggers and actions services), so they fire whether the run
was scheduled, triggered by hand or started with `python -m flows.pipeline` (`python -m
flows.drift`) against the server. The webhook gets a JSON body `{"text": "..."}` (what Slack,
Mattermost and Teams incoming webhooks read) naming the run, its final state and the reason.
Create or update the block and both automations (idempotent), against the server in
PREFECT_API_URL:

    python -m flows.alerts --webhook-url https://hooks.slack.com/services/T000/B000/abc123
    python -m flows.alerts --show
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import timedelta
from typing import cast

from prefect.automations import Automation, CallWebhook, EventTrigger
from prefect.blocks.webhook import Webhook
from prefect.events.schemas.automations import Posture
from prefect.settings import PREFECT_API_URL
from prefect.types import SecretDict
from pydantic import SecretStr

from flows.drift import DRIFTED, drift_check
from flows.pipeline import NOT_PROMOTED, pipeline

AUTOMATION = "nmt-pipeline: failed or not promoted"  # one automation of this name; re-running replaces it
DRIFT_AUTOMATION = "nmt-drift: drifted or failed"  # the drift check's, the same way
BLOCK = "nmt-alerts"  # the Webhook block holding the URL (a secret)
STATES = ("Failed", "Crashed", "TimedOut", NOT_PROMOTED)  # final pipeline-run states worth a message
DRIFT_STATES = ("Failed", "Crashed", "TimedOut", DRIFTED)  # final drift-check states worth a message
PAYLOAD = ('{"text": {{ ("nmt-pipeline run " ~ flow_run.name ~ ": " ~ flow_run.state.name ~ ". "'
           ' ~ (flow_run.state.message or "")) | tojson }}}')
DRIFT_PAYLOAD = PAYLOAD.replace("nmt-pipeline run ", "nmt-drift run ")
# automation name -> (the flow it watches, the final states it calls the webhook on, the message)
RULES = {AUTOMATION: (pipeline.name, STATES, PAYLOAD, "fails, crashes, times out or ends Not promoted"),
         DRIFT_AUTOMATION: (drift_check.name, DRIFT_STATES, DRIFT_PAYLOAD, "fails, crashes, times out or ends Drifted")}


def install(webhook_url: str, allow_private_urls: bool = False) -> list[Automation]:
    """Save the webhook block and (re)create the automations; returns them."""
    Webhook(method="POST", url=SecretStr(webhook_url), headers=SecretDict({"Content-Type": "application/json"}),
            allow_private_urls=allow_private_urls).save(BLOCK, overwrite=True)
    block_id = cast(Webhook, Webhook.load(BLOCK))._block_document_id
    assert block_id is not None
    created: list[Automation] = []
    for name, (flow_name, states, payload, when) in RULES.items():
        existing = _find(name)
        created.append(Automation(
            name=name,
            description=f"Calls the nmt-alerts webhook when an {flow_name} flow run {when} (flows/alerts.py)",
            trigger=EventTrigger(
                expect={f"prefect.flow-run.{state}" for state in states},
                match_related={"prefect.resource.role": "flow", "prefect.resource.name": flow_name},
                posture=Posture.Reactive, threshold=1, within=timedelta(0)),
            actions=[CallWebhook(block_document_id=block_id, payload=payload)],
        ).create())  # type: ignore[arg-type]  # sync context: an Automation, not a coroutine
        if existing is not None:  # replaced only once the new one exists: never a moment without alerts
            existing.delete()
    return created


def _find(name: str) -> Automation | None:
    try:
        return cast(Automation, Automation.read(name=name))
    except ValueError:  # "Automation ... not found"
        return None


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m flows.alerts", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--webhook-url", help="where the message goes (kept in the Prefect block nmt-alerts, a secret)")
    p.add_argument("--allow-private-urls", action="store_true",
                   help="allow a webhook on a private address (127.0.0.1, 10.x, ...): off by default")
    p.add_argument("--show", action="store_true", help="print the automations and exit")
    args = p.parse_args(argv)
    if not PREFECT_API_URL.value():
        print("python -m flows.alerts: error: PREFECT_API_URL is not set: point it at the Prefect server that runs "
              "the deployment (e.g. export PREFECT_API_URL=http://127.0.0.1:4200/api); an automation on a "
              "temporary server would be gone when this command ends", file=sys.stderr)
        return 2
    if not args.show and not args.webhook_url:
        p.error("--webhook-url is required (or --show)")
    try:
        if args.show:
            found = {name: _find(name) for name in RULES}
            for name, automation in found.items():
                print(automation.model_dump_json(indent=2) if automation else f"no automation named {name!r}")
            return 0 if all(found.values()) else 1
        automations = install(args.webhook_url, args.allow_private_urls)
    except Exception as exc:  # the server is down or refuses: say so in one line
        print(f"python -m flows.alerts: error: {type(exc).__name__}: {exc} (is PREFECT_API_URL set to a running "
              "Prefect server? `prefect config view`)", file=sys.stderr)
        return 1
    for automation in automations:
        print(f"automation {automation.name!r} ({automation.id}) calls block {BLOCK!r} on: "
              f"{', '.join(RULES[automation.name][1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
