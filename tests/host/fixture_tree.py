"""Host captures (tests/fixtures/host) in the shared tree format."""

from __future__ import annotations

from pathlib import Path

from tests.fixture_tree import FixtureTree
from tests.helpers import FIXTURES

HOST_SECTIONS = ["os", "kernel", "cpu", "memory", "pci"]
TREES = FixtureTree(FIXTURES / "host", HOST_SECTIONS)
capture = TREES.capture
mapping = TREES.mapping
tree_facts = TREES.tree_facts

if __name__ == "__main__":  # pragma: no cover - run by hand to (re)capture
    import argparse

    from clustergrade.seam import LocalHost

    ap = argparse.ArgumentParser(description="capture this machine's host facts as a fixture")
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    capture(LocalHost(), args.out)
