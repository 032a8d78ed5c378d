"""Run the collectors on one host and assemble its :class:`NodeFacts`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from typing import Any

from clustergrade.collect.base import CollectContext, CollectorSpec, registered
from clustergrade.facts.base import CollectorError
from clustergrade.facts.node import SECTIONS, CollectorRun, NodeFacts
from clustergrade.seam import Host

#: Called as each collector finishes: (name, run).
Progress = Callable[[str, CollectorRun], None]


class Interrupted(Exception):
    """Collection stopped by Ctrl-C; ``facts`` holds what was collected."""

    def __init__(self, facts: NodeFacts) -> None:
        super().__init__("interrupted")
        self.facts = facts


def collect_node(
    host: Host,
    sections: Iterable[str] | None = None,
    *,
    source: str = "local",
    workers: int = 8,
    progress: Progress | None = None,
) -> NodeFacts:
    """Collect ``sections`` (default: all) from ``host``.

    Collectors run concurrently (most of their time is spent waiting on
    commands); one that declares ``after`` waits for those sections.  Nothing a
    collector does can end the run: exceptions become recorded errors.  On
    Ctrl-C, :class:`Interrupted` carries the facts gathered so far.
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
        for name in pending:
            runs.setdefault(name, CollectorRun(status="skipped", message="interrupted"))
        return NodeFacts(
            hostname=host.name,
            collected_at=datetime.now(UTC),
            source=source,
            duration_s=round(time.monotonic() - start, 4),
            collectors=runs,
            errors=errors,
            **done,
        )

    def record(name: str, fut: Future[tuple[Any, list[CollectorError], float]]) -> None:
        try:
            value, errs, took = fut.result()
        except Exception as exc:
            run = CollectorRun(status="error", message=f"{type(exc).__name__}: {exc}")
            errors.append(CollectorError(collector=name, message=run.message or ""))
        else:
            errors.extend(errs)
            done[name] = value
            status = "ok"
            message = None
            if value is None:
                status = "error"
                message = errs[0].message if errs else "collector returned nothing"
            run = CollectorRun(status=status, duration_s=round(took, 4), message=message)
        runs[name] = run
        if progress is not None:
            progress(name, run)

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="collect")
    running: dict[Future[tuple[Any, list[CollectorError], float]], str] = {}
    try:
        while pending or running:
            for name, spec in list(pending.items()):
                if all(dep in runs and dep not in pending for dep in spec.after) and not any(
                    dep in running.values() for dep in spec.after
                ):
                    del pending[name]
                    running[pool.submit(_run_one, spec, host, dict(done))] = name
            if not running:
                break
            finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for fut in finished:
                record(running.pop(fut), fut)
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        for fut, name in running.items():
            if fut.done():
                record(name, fut)
            else:
                runs[name] = CollectorRun(status="skipped", message="interrupted")
        raise Interrupted(finish()) from None
    pool.shutdown(wait=True)
    return finish()


def _run_one(
    spec: CollectorSpec, host: Host, done: dict[str, Any]
) -> tuple[Any, list[CollectorError], float]:
    ctx = CollectContext(host, spec.name, done)
    t0 = time.monotonic()
    value = spec.func(ctx)
    return value, ctx.errors, time.monotonic() - t0
