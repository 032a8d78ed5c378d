"""Security captures (tests/fixtures/security): the shared tree format with
full stats, since device modes are what these checks judge."""

from __future__ import annotations

from pathlib import Path

from tests.fixture_tree import FixtureTree
from tests.helpers import FIXTURES

SECTIONS = ["os", "cpu", "security", "imex", "gpudirect"]
TREES = FixtureTree(FIXTURES / "security", SECTIONS)
capture = TREES.capture
mapping = TREES.mapping
tree_facts = TREES.tree_facts

if __name__ == "__main__":  # pragma: no cover - run by hand to (re)capture
    import argparse

    from clustergrade.seam import LocalHost

    ap = argparse.ArgumentParser(description="capture this machine's security facts as a fixture")
    ap.add_argument("out", type=Path)
    capture(LocalHost(), ap.parse_args().out)
