"""The software collectors on the CI VM capture and on broken answers."""

from __future__ import annotations

from clustergrade.collect.runner import collect_node
from clustergrade.seam import CommandResult, ReplayHost
from tests.software.replay import SECTIONS, SW, ci_vm, public


def test_ci_vm_capture_replays_without_errors() -> None:
    f = ci_vm()
    assert f.errors == []
    assert f.cuda is not None and f.containers is not None and f.dcgm is not None
    assert f.cuda.cuda.version == "13.0.88"
    assert f.cuda.slurm.version == "22.05.8"
    assert f.cuda.slurm_package == "22.05.8-4+deb12u3"
    assert f.cuda.munge_package == "0.5.15-2+deb12u1"
    assert not f.cuda.nccl.installed
    assert f.containers.docker.version == "28.2.2"
    assert not f.containers.containerd.installed
    assert f.containers.ctk_config is None
    assert not f.dcgm.dcgmi.installed


def test_public_answers_fill_tools() -> None:
    f = ci_vm(
        commands={
            ("runc", "--version"): public("runc-1.0.0-rc91.txt"),
            ("nvidia-ctk", "--version"): public("nvidia-ctk-1.12.0.txt"),
        },
        files={"/etc/nvidia-container-runtime/config.toml": public("ctk-config-default-1.14.toml")},
    )
    assert f.containers is not None
    assert f.containers.runc.version == "1.0.0-rc91+dev"
    assert f.containers.nvidia_ctk.version == "1.12.0"
    assert f.containers.ctk_config is not None and f.containers.ctk_config.mode == "auto"


def test_broken_config_and_unparseable_output_are_errors_not_crashes() -> None:
    f = ci_vm(
        commands={("runc", "--version"): public("derived-empty.txt")},
        files={
            "/etc/nvidia-container-runtime/config.toml": public("derived-ctk-config-truncated.toml")
            + b"\n[[[",
        },
    )
    assert f.containers is not None
    assert f.containers.runc.installed and f.containers.runc.version is None
    msgs = [e.message for e in f.errors]
    assert any("runc" in m for m in msgs)
    assert any("not valid TOML" in m for m in msgs)


def test_timeouts_and_unrecorded_answers_are_errors() -> None:
    from clustergrade.capture import load

    rec = load(SW / "ci-vm-software.tar.gz")
    argv = ("docker", "--version")
    rec.commands[argv] = CommandResult(argv, None, timed_out=True, duration_s=10.0)
    f = collect_node(ReplayHost(rec), SECTIONS, source="replay")
    assert f.containers is not None and f.containers.docker.installed
    assert any("timed out" in e.message for e in f.errors)
    empty = collect_node(ReplayHost.from_mapping(), SECTIONS, source="replay")
    assert empty.cuda is not None and empty.errors
