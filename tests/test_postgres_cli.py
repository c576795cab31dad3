"""The commands on a PostgreSQL store (``[store] url`` or ``RELEASE_WATCH_STORE_URL``): a poll
and ``status`` work as on the embedded store, nothing is written under ``store.path``, and the
URL's password never shows (``config check``, ``status``, errors)."""

from __future__ import annotations

import json

import pytest


def with_password(url: str, password: str) -> str:
    return url.replace("postgresql://rwtest@", f"postgresql://rwtest:{password}@")


def test_a_poll_and_status_on_postgres_write_nothing_under_store_path(
        run_cli, write_config, fake_github, tmp_path, postgres_url, monkeypatch):
    fake_github.add_release("pytorch/pytorch", tag="v2.8.0", body="- a fix (#1)")
    fake_github.add_repo("pytorch/xla")
    monkeypatch.setenv("RELEASE_WATCH_STORE_URL", with_password(postgres_url, "pw-77-secret"))
    config = write_config()
    assert run_cli("--config", str(config), "poll").code == 0
    assert not (tmp_path / "store").exists()
    status = run_cli("--config", str(config), "status", "--json")
    assert status.code == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["store"].startswith("postgresql://***@") and "pw-77-secret" not in status.stdout
    assert [repo["releases_known"] for repo in data["repos"]] == [1, 0]
    # The poll led the store for its run (term 1) and handed the lease back: nobody leads.
    assert data["leader"]["term"] == 1 and data["leader"]["seconds_left"] <= 0
    assert data["daemon"]["running"] is False
    text = run_cli("--config", str(config), "status")
    assert "store: postgresql://***@" in text.stdout and "daemon: not running" in text.stdout
    assert "(term 1, lease lapsed: no replica leads)" in text.stdout


def test_config_check_masks_the_store_urls_password(run_cli, write_config):
    path = write_config()
    path.write_text(path.read_text().replace(
        '[store]\npath = "store"\n',
        '[store]\npath = "store"\nurl = "postgresql://rw:pw-88-secret@db.example:5432/rw"\n'))
    result = run_cli("--config", str(path), "config", "check")
    assert result.code == 0, result.stderr
    assert "pw-88-secret" not in result.stdout + result.stderr
    assert "postgresql://***@db.example:5432/rw" in result.stdout


@pytest.mark.parametrize("url", ["mysql://db/rw", "sqlite:///tmp/x.db"])
def test_a_store_url_that_is_not_postgresql_is_a_config_error(run_cli, write_config, url):
    path = write_config()
    path.write_text(path.read_text().replace('[store]\npath = "store"\n',
                                             f'[store]\npath = "store"\nurl = "{url}"\n'))
    result = run_cli("--config", str(path), "config", "check")
    assert result.code == 2 and "store.url must be a postgresql:// URL" in result.stderr


def test_a_manual_poll_beside_a_leading_daemon_waits_then_gives_up(
        run_cli, write_config, fake_github, clock, postgres_url, monkeypatch):
    from watcher.store import Store

    monkeypatch.setenv("RELEASE_WATCH_STORE_URL", postgres_url)
    store = Store.connect(postgres_url)
    lease = store.lease("the-daemon", 15)
    assert lease is not None and lease.acquire() == 1
    path = write_config('[poll]\nlock_wait = "5s"\n')
    result = run_cli("--config", str(path), "poll")
    assert result.code == 1
    assert "another replica leads the store" in result.stderr
    assert "gave up after 5s" in result.stderr
    assert 5 <= sum(clock.slept) < 7  # waited on the injected clock, in steps
    assert not fake_github.requests  # nothing polled, nothing posted
    assert store.leader()["holder"] == "the-daemon"
    lease.close()
    store.close()


def test_store_check_and_reinit_on_postgres(run_cli, write_config, fake_github, postgres_url,
                                            monkeypatch):
    fake_github.add_repo("pytorch/pytorch")
    fake_github.add_repo("pytorch/xla")
    monkeypatch.setenv("RELEASE_WATCH_STORE_URL", postgres_url)
    config = str(write_config())
    assert run_cli("--config", config, "poll").code == 0
    check = run_cli("--config", config, "store", "check")
    assert check.code == 0 and "ok (every table there; 2 repos, 0 releases" in check.stdout
    reinit = run_cli("--config", config, "store", "reinit", "--force")
    assert reinit.code == 1 and "starts over in a new database" in reinit.stderr


def test_a_digest_by_hand_on_postgres_leads_for_its_run(run_cli, write_config, fake_github,
                                                        postgres_url, monkeypatch):
    from watcher.store import Store

    monkeypatch.setenv("RELEASE_WATCH_STORE_URL", postgres_url)
    notifiers = ('[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n'
                 'mode = "digest"\n')
    config = write_config(notifiers=notifiers)
    result = run_cli("--config", str(config), "digest")
    assert result.code == 0, result.stderr
    store = Store.connect(postgres_url)
    assert store.leader()["term"] == 1 and store.digest_since("log") is not None
    store.close()


def test_config_check_shows_the_url_from_the_environment_masked(run_cli, write_config,
                                                                monkeypatch):
    monkeypatch.setenv("RELEASE_WATCH_STORE_URL", "postgresql://rw:pw-99-secret@db:5432/rw")
    result = run_cli("--config", str(write_config()), "config", "check")
    assert result.code == 0, result.stderr
    assert "pw-99-secret" not in result.stdout + result.stderr
    assert "postgresql://***@db:5432/rw" in result.stdout
