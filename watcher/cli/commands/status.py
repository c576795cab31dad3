"""``release-watch status``: what the store knows, for people (text) and probes (--check)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from watcher.health import ago, status_report
from watcher.untrusted import clean_line

if TYPE_CHECKING:
    from watcher.config import Config
    from watcher.deps import Dependencies

def run_status(config: Config, deps: Dependencies, *, as_json: bool, check: bool) -> int:
    now = deps.clock()
    data = status_report(config, deps, now)
    out = deps.stdout
    if as_json:
        out.write(json.dumps(data, indent=2, default=str) + "\n")
    else:
        out.write(_text(data, now))
    return 0 if data["healthy"] or not check else 1


def _daemon_lines(daemon: dict[str, Any] | None) -> list[str]:
    if not daemon or not daemon.get("running"):
        seen = (f" (last seen: pid {daemon['pid']}, heartbeat {daemon['heartbeat']})"
                if daemon and daemon.get("heartbeat") else "")
        return [f"daemon: not running{seen}"]
    if not daemon.get("heartbeat"):
        return [f"daemon: pid {daemon['pid']}, running, no job finished yet"]
    return [f"daemon: pid {daemon['pid']}, last heartbeat {daemon['heartbeat']}",
            *(f"  next {job}: {when}" for job, when in sorted(daemon["next_runs"].items()))]


def _text(data: dict[str, Any], now: datetime) -> str:
    """Errors and names are shown with their controls escaped (``clean_line``): Slack's and
    GitHub's answers are quoted in them, and a terminal must not obey what they hold."""
    lines = [f"store: {data['store']}"]
    if not data["repos"]:
        lines.append("no poll recorded yet")
    for repo in data["repos"]:
        flag = "" if repo["watched"] else " (no longer watched)"
        lines.append(f"{repo['repo']}{flag}")
        lines.append(f"  last poll:    {ago(repo['last_poll'], now)}")
        lines.append(f"  last success: {ago(repo['last_success'], now)}")
        lines.append(f"  releases known: {repo['releases_known']}")
        if repo["moved_to"]:
            lines.append(f"  moved: GitHub answers for it as {repo['moved_to']} (renamed or "
                         f"transferred); name {repo['moved_to']} in the config")
        if repo["consecutive_failures"]:
            lines.append(f"  failing: {repo['consecutive_failures']} polls in a row; last error: "
                         f"{clean_line(repo['last_error'])}")
    rate = data["rate_limit"]
    if rate.get("remaining") is not None:
        lines.append(f"rate limit: {rate['remaining']}/{rate['limit']} left")
    lines.append(f"pending deliveries: {data['pending_deliveries']}"
                 + "".join(f"\n  {name}: {count}" for name, count
                           in data["pending_by_notifier"].items()))
    for failing in data["failing_deliveries"]:
        kind = "permanent" if failing["permanent"] else "transient"
        lines.append(f"  {clean_line(failing['notifier'])}: {failing['attempts']} failed attempts "
                     f"({kind}): {clean_line(failing['error'])}")
    for name, size in data["digest_queues"].items():
        lines.append(f"digest queue {name}: {size} event{'' if size == 1 else 's'}")
    if data["subscriptions"]:
        lines.append(f"subscriptions from Slack (/release-watch): {len(data['subscriptions'])}")
    lines += [f"  {sub['notifier']}: #{clean_line(sub['channel_name'])} "  # Slack's, as sent
              f"({clean_line(sub['channel'])}): {clean_line(sub['what'])}"
              for sub in data["subscriptions"]]
    lines += _daemon_lines(data["daemon"])
    leader = data.get("leader")
    if leader is not None:  # a shared store (PostgreSQL): who leads its replicas
        state = (f"{leader['seconds_left']:g}s left" if leader["seconds_left"] > 0
                 else "lapsed: no replica leads")
        lines.append(f"leader: {clean_line(leader['holder'])} (term {leader['term']}, "
                     f"lease {state})")
    lines.append(f"health: {'ok' if data['healthy'] else 'UNHEALTHY'}: "
                 f"{clean_line(data['health'])}")
    return "\n".join(lines) + "\n"
