"""What ``impact`` and ``upgrade`` found, and the formats CI reads it in.

``found`` is the value both commands make (each item with its impact and the release it is
of) and how uses over several releases are kept: every (use, change) pair, each change under
the release that makes it; ``sarif`` writes it as a SARIF 2.1.0 log (GitHub code scanning,
most CI dashboards); ``workflow`` as GitHub Actions workflow commands, one annotation a use;
``codequality`` turns such a SARIF log into GitLab's Code Quality report (run as a module by
the GitLab job). Pure: values in, text or JSON-ready values out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.report.found import Found as Found
    from watcher.report.found import Scope as Scope
    from watcher.report.found import under_releases as under_releases
    from watcher.report.sarif import sarif_log as sarif_log
    from watcher.report.workflow import workflow_commands as workflow_commands

_EXPORTS = {
    "Found": "found",
    "Scope": "found",
    "sarif_log": "sarif",
    "under_releases": "found",
    "workflow_commands": "workflow",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
