"""Errors a user can act on.

Every failure that bad input or bad configuration can cause is raised as an `NmtError`
subclass whose message names the file / line / key at fault and what to do about it.
The CLI prints that message on one line and exits non-zero, never a traceback.
"""


class NmtError(Exception):
    """Base class: a problem the user can fix; the message says how."""


class ConfigError(NmtError):
    """params.yaml (or another config file) has a missing, unknown or ill-typed key."""


class DataError(NmtError):
    """An input data file is missing, unreadable, misaligned or malformed."""


class DownloadError(NmtError):
    """A corpus file could not be fetched or failed its checksum."""


class GateError(NmtError):
    """A data-validation gate failed: the stage's output is not trustworthy."""


class TrainingInterrupted(NmtError):
    """Training stopped on SIGTERM / Ctrl-C after writing a checkpoint; re-run to resume."""


class TrainingDiverged(NmtError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""


class OutOfSpace(NmtError):
    """A write ran out of disk space; the file it was writing is not used, the previous one stays."""
