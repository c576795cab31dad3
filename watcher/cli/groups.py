"""The command groups of ``release-watch``: ``atlas`` (build and diff the API atlas of a
release), ``config`` (check) and ``store`` (check, reinit, copy into PostgreSQL). Each command
imports what it runs only when it runs."""

from __future__ import annotations

import sys

import click

from watcher.cli.options import ATLAS_SECTIONS, State, global_options

__all__ = ["atlas_group", "config_group", "store_group"]

_PACKAGE_HELP = "The package whose API it is (torch_xla: pytorch/xla's)."


@click.group("atlas")
def atlas_group() -> None:
    """The API atlas of a package release, read from its wheel: build one, or diff two."""


@atlas_group.command("build")
@global_options
@click.argument("what", metavar="WHEEL|VERSION")
@click.option("--package", type=click.Choice(["torch", "torch_xla"]), default="torch",
              show_default=True, help=_PACKAGE_HELP)
@click.pass_obj
def atlas_build(state: State, what: str, package: str) -> None:
    """Build the atlas of a wheel file, or of a version (bundled, stored, or fetched from the
    package index and built), keep it in the store and print what it holds."""
    from watcher.cli.commands.atlas import run_atlas_build

    sys.exit(run_atlas_build(state.config(*ATLAS_SECTIONS), state.deps, what, package))


@atlas_group.command("diff")
@global_options
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option("--package", type=click.Choice(["torch", "torch_xla"]), default="torch",
              show_default=True, help=_PACKAGE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.pass_obj
def atlas_diff(state: State, old: str, new: str, package: str, fmt: str) -> None:
    """The API changes from OLD to NEW (each a wheel, an atlas file or a version): names
    removed, parameters removed or made keyword-only, defaults changed, new deprecations."""
    from watcher.cli.commands.atlas import run_atlas_diff
    from watcher.cli.teardown import Teardown

    code = run_atlas_diff(lambda: state.config(*ATLAS_SECTIONS), state.deps, old, new,
                          package=package, fmt=fmt)
    Teardown.end(code)  # reads atlases, writes no state (a wheel's build has ended by now)
    sys.exit(code)


@click.group("config")
def config_group() -> None:
    """Configuration commands."""


@config_group.command("check")
@global_options
@click.option("--online", is_flag=True,
              help="Also ask GitHub (/rate_limit) and Slack (auth.test) whether the tokens "
                   "work; exit 1 if one does not.")
@click.pass_obj
def config_check(state: State, online: bool) -> None:
    """Validate everything `run` would; print the config with secrets masked."""
    from watcher.cli.commands.config_check import run_config_check

    sys.exit(run_config_check(state.config_file(), state.deps, online=online))


@click.group("store")
def store_group() -> None:
    """Store commands: check its database, start over, or copy it into PostgreSQL."""


@store_group.command("check")
@global_options
@click.pass_obj
def store_check(state: State) -> None:
    """Run SQLite's integrity check over the store; exit 1 if it is damaged."""
    from watcher.cli.commands.store import run_store_check

    sys.exit(run_store_check(state.config(), state.deps))


@store_group.command("reinit")
@global_options
@click.option("--force", is_flag=True, help="Start over even if the store is sound.")
@click.pass_obj
def store_reinit(state: State, force: bool) -> None:
    """Start over with an empty store (a lost or damaged one is set aside, not deleted)."""
    from watcher.cli.commands.store import run_store_reinit

    sys.exit(run_store_reinit(state.config(), state.deps, force=force))


@store_group.command("copy")
@global_options
@click.option("--to", "url", metavar="URL", default=None,
              help="The PostgreSQL database (postgresql://…); default: [store] url.")
@click.pass_obj
def store_copy(state: State, url: str | None) -> None:
    """Copy the embedded store (store.path) into PostgreSQL; run again, it copies nothing new."""
    from watcher.cli.commands.store_copy import run_store_copy

    sys.exit(run_store_copy(state.config(), state.deps, url))
