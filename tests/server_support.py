"""A daemon with its listener on 127.0.0.1 (an ephemeral port), in this process: its scheduler
paused, its jobs run by the test when it wants them, its clock the test's; and what a scrape of
``/metrics`` holds, parsed by prometheus_client's own parser."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import httpx
from conftest import TOKEN, Clock
from prometheus_client.parser import text_string_to_metric_families

from watcher.app import Dependencies, build_daemon
from watcher.config import Secrets, load_config

LISTEN = '[server]\nlisten = "127.0.0.1:0"\n'


class Served:
    def __init__(self, config: Path, clock: Clock, env: dict[str, str] | None = None) -> None:
        env = dict(env or {})
        deps = Dependencies(
            stdout=io.StringIO(),
            sleep=clock.sleep,
            clock=clock,
            epoch=clock.epoch,
            secrets=Secrets.model_validate({"GITHUB_TOKEN": TOKEN, **env}),
            environ=env,
        )
        self.daemon = build_daemon(load_config(config), deps)
        self.daemon.start(paused=True)  # scheduled as for real; the test runs the jobs
        listener = self.daemon.service.listener
        assert listener is not None
        self.url = listener.url
        self.http = httpx.Client(base_url=self.url, timeout=10)

    def job(self, job_id: str) -> None:
        """Run a scheduled job now, in this thread, as the scheduler would."""
        assert self.daemon.scheduler is not None
        job = self.daemon.scheduler.get_job(job_id)
        job.func(*job.args)

    def poll(self) -> None:
        self.job("poll")

    def get(self, path: str, **options: Any) -> httpx.Response:
        return self.http.get(path, **options)

    def metrics(self) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
        """Every sample of a scrape: ``(name, labels)`` → value."""
        response = self.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        return {
            (sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(response.text)
            for sample in family.samples
        }

    def close(self) -> None:
        """Stop the daemon once: a second ``Daemon.stop`` would wait its whole
        ``poll.shutdown_timeout`` for the job lock the first one kept."""
        if self.http.is_closed:
            return
        self.http.close()
        self.daemon.stop()


def value(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float | None:
    return samples.get((name, frozenset(labels.items())))
