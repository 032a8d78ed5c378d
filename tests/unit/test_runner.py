"""The collector runner: a broken collector is a recorded error, dependencies
are honoured, Ctrl-C keeps what was collected."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import pytest

from clustergrade.collect import runner
from clustergrade.collect.base import CollectContext, CollectorSpec
from clustergrade.facts.node import SECTIONS
from clustergrade.seam import ReplayHost


def _specs(
    funcs: dict[str, Any], after: dict[str, tuple[str, ...]] | None = None
) -> dict[str, CollectorSpec]:
    return {n: CollectorSpec(n, f, (after or {}).get(n, ())) for n, f in funcs.items()}


def test_exception_becomes_error_and_others_still_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(ctx: CollectContext) -> Any:
        raise RuntimeError("parser exploded")

    def fine(ctx: CollectContext) -> Any:
        return None  # placeholder models are not needed for this test

    monkeypatch.setattr(runner, "registered", lambda: _specs({"os": boom, "cpu": fine}))
    facts = runner.collect_node(ReplayHost.from_mapping(), ["os", "cpu"])
    assert facts.collectors["os"].status == "error"
    assert "parser exploded" in (facts.collectors["os"].message or "")
    assert any(e.collector == "os" for e in facts.errors)
    # A collector returning nothing is an error too: unknown is never fine.
    assert facts.collectors["cpu"].status == "error"
    assert facts.collectors["kernel"].status == "skipped"
    assert facts.section_problem("os") is not None


def test_after_runs_dependencies_first(monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []

    def first(ctx: CollectContext) -> Any:
        time.sleep(0.05)
        order.append("pci")
        return None

    def second(ctx: CollectContext) -> Any:
        order.append("nvidia")
        return None

    monkeypatch.setattr(
        runner, "registered", lambda: _specs({"pci": first, "nvidia": second}, {"nvidia": ("pci",)})
    )
    runner.collect_node(ReplayHost.from_mapping(), ["nvidia"])  # pulls in pci
    assert order == ["pci", "nvidia"]


def test_unknown_section_is_refused() -> None:
    with pytest.raises(ValueError):
        runner.collect_node(ReplayHost.from_mapping(), ["nope"])


def test_ctrl_c_keeps_what_was_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def quick(ctx: CollectContext) -> Any:
        ctx.error("seen before the interrupt")
        return None

    def hangs(ctx: CollectContext) -> Any:
        release.wait(5)
        return None

    monkeypatch.setattr(runner, "registered", lambda: _specs({"os": quick, "cpu": hangs}))
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    with pytest.raises(runner.Interrupted) as info:
        runner.collect_node(ReplayHost.from_mapping(), ["os", "cpu"])
    release.set()
    facts = info.value.facts
    assert facts.collectors["os"].status == "error"
    assert facts.collectors["cpu"].status == "skipped"
    assert facts.collectors["cpu"].message == "interrupted"
    assert any("seen before" in e.message for e in facts.errors)


def test_every_section_has_a_collector_registered() -> None:
    from clustergrade.collect.base import registered

    assert set(registered()) == set(SECTIONS)


def test_hung_collector_is_abandoned_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def hangs(ctx: CollectContext) -> Any:
        release.wait(10)
        return None

    def quick(ctx: CollectContext) -> Any:
        ctx.error("quick ran")
        return None

    monkeypatch.setattr(runner, "registered", lambda: _specs({"os": hangs, "cpu": quick}))
    t0 = time.monotonic()
    facts = runner.collect_node(ReplayHost.from_mapping(), ["os", "cpu"], deadline_s=0.5)
    release.set()
    assert time.monotonic() - t0 < 3
    assert facts.collectors["os"].status == "error"
    assert "abandoned" in (facts.collectors["os"].message or "")
    assert any(e.message == "quick ran" for e in facts.errors)
