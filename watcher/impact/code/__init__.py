"""What a codebase uses: every Python file read with ``ast`` and resolved through its imports.

``pywalk`` walks one parsed file for its imports and raw references (with how each is
referenced: a call, an import, an annotation, an ``isinstance`` argument, a decorator),
with ``shapes`` for the expressions it reads whole (dotted names, literal dicts);
``pyindex`` resolves them to dotted names; ``callers`` lists what a file shows of who calls its
functions (under which version guards); ``reexport`` follows names the codebase's own modules
re-export; ``usetable`` is the look-ups the matcher asks; ``scan`` walks a codebase (``tree``)
through a per-file cache, so an unchanged file is never read again (``gcpause``: with the
cyclic collector paused), reading a newer Python's syntax in its 3.11 spelling
(``newsyntax``); ``spelled`` asks whether any text file of the tree writes a word;
``ignores`` reads the ``# release-watch: ignore[...]`` comments on the way;
``syntax`` holds the small readings of syntax trees the atlas and the subjects reader share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.impact.code.forwarded import INERT as INERT
    from watcher.impact.code.gcpause import gc_paused as gc_paused
    from watcher.impact.code.ignores import MARKER as MARKER
    from watcher.impact.code.ignores import line_markers as line_markers
    from watcher.impact.code.pyindex import UNSET as UNSET
    from watcher.impact.code.pyindex import PythonIndex as PythonIndex
    from watcher.impact.code.pyindex import UnparsableError as UnparsableError
    from watcher.impact.code.pyindex import UseRow as UseRow
    from watcher.impact.code.pyindex import module_name as module_name
    from watcher.impact.code.pyindex import read_python as read_python
    from watcher.impact.code.pywalk import FIRST as FIRST
    from watcher.impact.code.pywalk import NOT_CALLING as NOT_CALLING
    from watcher.impact.code.scan import CodeIndex as CodeIndex
    from watcher.impact.code.scan import ScanCounts as ScanCounts
    from watcher.impact.code.scan import index_python as index_python
    from watcher.impact.code.scan import scan_codebase as scan_codebase
    from watcher.impact.code.syntax import dotted as dotted
    from watcher.impact.code.usetable import Hit as Hit
    from watcher.impact.code.usetable import UseTable as UseTable

_EXPORTS = {
    "CodeIndex": "scan",
    "dotted": "syntax",
    "FIRST": "pywalk",
    "NOT_CALLING": "pywalk",
    "gc_paused": "gcpause",
    "Hit": "usetable",
    "index_python": "scan",
    "INERT": "forwarded",
    "line_markers": "ignores",
    "MARKER": "ignores",
    "module_name": "pyindex",
    "PythonIndex": "pyindex",
    "read_python": "pyindex",
    "scan_codebase": "scan",
    "ScanCounts": "scan",
    "UnparsableError": "pyindex",
    "UNSET": "pyindex",
    "UseRow": "pyindex",
    "UseTable": "usetable",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
