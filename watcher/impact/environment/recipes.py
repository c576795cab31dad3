"""A conda-build recipe (``meta.yaml``): the Pythons and packages the conda package it builds
needs to run, the ``host`` and ``run`` lists of its ``requirements``. Like a package's metadata
it declares what the package supports, not an environment it installs.

Read line by line, without a YAML library: a recipe is Jinja before it is YAML (``{{ python
}}``, ``{% set %}``), and the lists read here are plain. A spec built by Jinja says nothing
without rendering, so it is skipped; a selector (``# [py<38]``) is a comment here.
"""

from __future__ import annotations

from watcher.impact.environment.declarations import conda_spec, yaml_lines
from watcher.impact.model import Declaration

__all__ = ["conda_recipe"]

# The requirement lists of the package itself: what it is built against and runs with (the
# ``build`` list holds compilers and tools).
PACKAGE_LISTS = frozenset({"host", "run"})


def conda_recipe(lines: list[str]) -> list[Declaration]:
    """The declarations of a recipe's ``requirements: host:`` and ``run:`` lists."""
    found: list[Declaration] = []
    in_requirements = False
    listing = False
    list_indent: int | None = None
    for number, text, indent, item in yaml_lines(lines):
        if item.startswith("{%"):
            continue
        if indent == 0:
            in_requirements = item.partition(":")[0].strip() == "requirements"
            listing, list_indent = False, None
            continue
        if not in_requirements:
            continue
        if not item.startswith("-"):
            name = item.partition(":")[0].strip()
            listing, list_indent = name in PACKAGE_LISTS, indent
            continue
        if not listing or (list_indent is not None and indent < list_indent):
            continue
        spec = item[1:].strip().strip("'\"")
        if "{{" in spec or "{%" in spec:
            continue  # rendered by conda-build: ``python {{ python }}``
        found += conda_spec(number, text, spec)
    return found
