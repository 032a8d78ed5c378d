"""Run the collectors on one host and assemble its :class:`NodeFacts`."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from clustergrade.collect.base import CollectContext, CollectorSpec, registered
from clustergrade.facts.base import CollectorError
from clustergrade.facts.node import SECTIONS, CollectorRun, NodeFacts
from clustergrade.seam import Host

#: Called as each collector finishes: (name, run).
Progress = Callable[[str, CollectorRun], None]

#: A collector still running after this many seconds is abandoned and reported
#: as an error, so one hung read (a dead NFS mount, a wedged driver) cannot
#: hang the audit.  Commands have their own, shorter timeouts.
COLLECTOR_DEADLINE_S = 60.0


class Interrupted(Exception):
    """Collection stopped by Ctrl-C; ``facts`` holds what was collected."""

    def __init__(self, facts: NodeFacts) -> None:
        super().__init__("interrupted")
        self.facts = facts


_Outcome = tuple[str, Any, list[CollectorError], float, BaseException | None]


def collect_node(
    host: Host,
    sections: Iterable[str] | None = None,
    *,
    source: str = "local",
    progress: Progress | None = None,
    deadline_s: float = COLLECTOR_DEADLINE_S,
) -> NodeFacts:
    """Collect ``sections`` (default: all) from ``host``.

    Collectors run concurrently in daemon threads (most of their time is spent
    waiting on commands and files); one that declares ``after`` starts when
    those sections are done.  Nothing a collector does can end the run:
    exceptions become recorded errors, and a collector that outlives
    ``deadline_s`` is abandoned with an error.  On Ctrl-C,
    :class:`Interrupted` carries the facts gathered so far.
    """
    specs = registered()
    wanted = set(SECTIONS if sections is None else sections)
    unknown = wanted - set(SECTIONS)
    if unknown:
        raise ValueError(f"unknown sections: {', '.join(sorted(unknown))}")
    # A wanted collector pulls in what it depends on.
    stack = [n for n in wanted if n in specs]
    while stack:
        for dep in specs[stack.pop()].after:
            if dep not in wanted and dep in specs:
                wanted.add(dep)
                stack.append(dep)

    start = time.monotonic()
    done: dict[str, Any] = {}
    runs: dict[str, CollectorRun] = {}
    errors: list[CollectorError] = []
    pending = {name: specs[name] for name in SECTIONS if name in wanted and name in specs}
    for name in SECTIONS:
        if name not in wanted:
            runs[name] = CollectorRun(status="skipped", message="not requested")
        elif name not in specs:
            runs[name] = CollectorRun(status="skipped", message="no collector for this section")

    def finish() -> NodeFacts:
        for name in SECTIONS:
            runs.setdefault(name, CollectorRun(status="skipped", message="interrupted"))
        return NodeFacts(
            hostname=host.name,
            collected_at=datetime.now(UTC),
            source=source,
            duration_s=round(time.monotonic() - start, 4),
            collectors={n: runs[n] for n in SECTIONS},
            errors=errors,
            **done,
        )

    def record(
        name: str, value: Any, errs: list[CollectorError], took: float, exc: BaseException | None
    ) -> None:
        if exc is not None:
            run = CollectorRun(
                status="error", duration_s=round(took, 4), message=f"{type(exc).__name__}: {exc}"
            )
            errors.extend(errs)
            errors.append(CollectorError(collector=name, message=run.message or ""))
        else:
            errors.extend(errs)
            if value is None:
                msg = errs[0].message if errs else "collector returned nothing"
                run = CollectorRun(status="error", duration_s=round(took, 4), message=msg)
            else:
                done[name] = value
                run = CollectorRun(status="ok", duration_s=round(took, 4))
        runs[name] = run
        if progress is not None:
            progress(name, run)

    results: queue.Queue[_Outcome] = queue.Queue()
    started: dict[str, float] = {}
    try:
        while pending or started:
            for name, spec in list(pending.items()):
                if all(dep in runs for dep in spec.after):
                    del pending[name]
                    started[name] = time.monotonic()
                    threading.Thread(
                        target=_run_one,
                        args=(spec, host, dict(done), results),
                        name=f"collect-{name}",
                        daemon=True,
                    ).start()
            if not started:
                break
            oldest = min(started.values())
            wait = max(0.0, oldest + deadline_s - time.monotonic())
            try:
                outcome = results.get(timeout=min(wait, 0.5) if wait > 0 else 0.0)
            except queue.Empty:
                now = time.monotonic()
                for name, t0 in list(started.items()):
                    if now - t0 >= deadline_s:
                        del started[name]
                        record(
                            name,
                            None,
                            [],
                            now - t0,
                            TimeoutError(f"still running after {deadline_s:.0f}s; abandoned"),
                        )
                continue
            name = outcome[0]
            if name in started:
                del started[name]
                record(*outcome)
    except KeyboardInterrupt:
        # Keep whatever finished in the meantime; the rest is marked interrupted.
        while True:
            try:
                outcome = results.get_nowait()
            except queue.Empty:
                break
            if outcome[0] in started:
                del started[outcome[0]]
                record(*outcome)
        raise Interrupted(finish()) from None
    return finish()


def _run_one(
    spec: CollectorSpec, host: Host, done: dict[str, Any], out: queue.Queue[_Outcome]
) -> None:
    ctx = CollectContext(host, spec.name, done)
    t0 = time.monotonic()
    try:
        value = spec.func(ctx)
    except Exception as exc:
        out.put((spec.name, None, ctx.errors, time.monotonic() - t0, exc))
        return
    out.put((spec.name, value, ctx.errors, time.monotonic() - t0, None))
