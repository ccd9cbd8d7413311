"""Why the service cannot start with these settings, in one line naming the setting (``StartupError``).

A builder that meets a file it cannot create or a database it cannot open
raises ``StartupError`` instead of the library's exception, after its exit
stack has closed what was opened: every server turns it into that one line on
stderr and the process's exit code, without a traceback
(``serving.server.app_around``; under several workers the supervisor says it
once). The codes are the command line's: 2, the settings are refused as
written (configuration); 1, the settings are valid but the machine refuses
them (environment: a folder that cannot be created, a file that is not a
database, a port in use).
"""

from __future__ import annotations

import os
from typing import Final

from influencer_stats.settings import declared

#: The settings are refused as written.
CONFIGURATION: Final = 2
#: The settings are valid; what they name cannot be used here.
ENVIRONMENT: Final = 1


class StartupError(Exception):
    """The one line saying why the service cannot start: ``VARIABLE=value: why``, and the exit code."""

    def __init__(self, setting: str, value: object, reason: str, code: int = ENVIRONMENT) -> None:
        self.variable = declared()[setting].env
        self.code = code
        super().__init__(f"{self.variable}={value}: {reason}")

    @classmethod
    def of(cls, setting: str, value: object, doing: str, error: BaseException) -> StartupError:
        """``doing`` failed with ``error`` (an ``OSError``'s text as ``strerror`` says it, without errno)."""
        return cls(setting, value, f"{doing}: {reason(error)}")


def reason(error: BaseException) -> str:
    """What went wrong, as a person reads it: ``Permission denied``, ``file is not a database``."""
    if isinstance(error, OSError) and error.errno is not None:
        return os.strerror(error.errno)
    return str(error) or type(error).__name__
