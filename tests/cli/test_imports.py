"""The audit path stays light: it never imports heavy libraries it does not need."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "numpy", "pandas", "scipy", "kubernetes", "sqlalchemy", "jinja2")


def test_audit_imports_nothing_heavy() -> None:
    p = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "clustergrade.cli", "audit", "--no-save"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in p.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert imported, "no -X importtime output"
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))
