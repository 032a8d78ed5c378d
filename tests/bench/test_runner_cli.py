"""The runner fences probes; runs save like audit runs; the CLI sub-app; and
importing the bench package never imports torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clustergrade.bench import runner
from clustergrade.bench.cli import app
from clustergrade.bench.judge import judge, to_results
from clustergrade.bench.model import BenchRun
from clustergrade.bench.runner import load_bench, run_bench, save_bench
from clustergrade.kb.loader import load
from tests.bench.fakehost import ByProgramHost


def test_unknown_probe_is_refused_before_anything_runs() -> None:
    with pytest.raises(ValueError, match="unknown probe"):
        run_bench(["storage", "gpu-burn"])


def test_skip_and_error_are_outcomes_not_crashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(ctx: object) -> list[object]:
        raise OSError("disk on fire")

    import clustergrade.bench.probes.storage as storage

    monkeypatch.setattr(storage, "run", boom)
    bench = run_bench(
        ["ib", "storage"], host=ByProgramHost({"ib_write_bw": None}), workdir=tmp_path
    )
    ib, st = bench.probes
    assert (ib.status, ib.reason) == ("skipped", "ib_write_bw (perftest) is not installed")
    assert st.status == "error" and st.reason == "OSError: disk on fire"
    assert bench.device == "cpu" and bench.node == "fake"


def test_run_saves_and_reads_back(tmp_path: Path) -> None:
    bench = run_bench(["storage"], host=ByProgramHost({"fio": None}), workdir=tmp_path, quick=True)
    results = to_results(bench, judge(bench, load()))
    path = save_bench(tmp_path / bench.run_id, bench, results)
    assert path.name == "bench.json"
    back = load_bench(path)
    assert back == bench
    assert json.loads(path.read_text())["schema"] == "clustergrade.bench/1"
    saved = json.loads((path.parent / "bench-results.json").read_text())
    assert [r["check_id"] for r in saved] == ["bench.storage.ran"]
    assert isinstance(BenchRun.model_validate_json(path.read_bytes()), BenchRun)


def test_cli_one_probe_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERGRADE_RUNS_DIR", str(tmp_path / "runs"))
    res = CliRunner().invoke(
        app, ["storage", "--quick", "--format", "json", "--workdir", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["bench"]["probes"][0]["probe"] == "storage"
    assert doc["results"][0]["check_id"] == "bench.storage.ran"
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert (run_dir / "bench.json").is_file() and (run_dir / "bench-results.json").is_file()


def test_cli_skip_is_not_a_failure(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["ib", "--no-save"])
    assert res.exit_code == 0, res.output
    assert "SKIP" in res.stdout and "bench.ib.ran" in res.stdout


def test_cli_lists_every_probe() -> None:
    res = CliRunner().invoke(app, ["--help"])
    assert res.exit_code == 0
    for name in (*runner.DEFAULT_SUITE, "all"):
        assert name in res.stdout


def test_importing_bench_does_not_import_torch() -> None:
    code = (
        "import sys\n"
        "import clustergrade.bench.cli, clustergrade.bench.runner, clustergrade.bench.judge\n"
        "import clustergrade.bench.probes.gemm, clustergrade.bench.probes.nccl\n"
        "import clustergrade.bench.probes.memory, clustergrade.bench.probes.lifecycle\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
