"""Software-stack facts from the CI VM's real capture, optionally with some
answers replaced by public captures (tests/fixtures/software/PROVENANCE.md)."""

from __future__ import annotations

from collections.abc import Mapping

from clustergrade.capture import load
from clustergrade.collect.runner import collect_node
from clustergrade.facts.node import NodeFacts
from clustergrade.seam import CommandResult, FileResult, PathInfo, ReplayHost
from tests.gpu.replay import a100
from tests.helpers import FIXTURES

SW = FIXTURES / "software"
CI_VM = "CI VM capture ci-vm-software.tar.gz (Debian 12, no GPU)"
SECTIONS = ["cuda", "containers", "dcgm"]


def public(name: str) -> bytes:
    return (SW / "public" / name).read_bytes()


def ci_vm(
    commands: Mapping[tuple[str, ...], bytes] | None = None,
    files: Mapping[str, bytes] | None = None,
    stats: Mapping[str, PathInfo] | None = None,
) -> NodeFacts:
    """Replay the CI VM capture; ``commands``/``files``/``stats`` replace answers."""
    rec = load(SW / "ci-vm-software.tar.gz")
    for argv, out in (commands or {}).items():
        rec.commands[argv] = CommandResult(argv, 0, stdout=out)
    for path, data in (files or {}).items():
        rec.files[path] = FileResult(path, data)
    for path, info in (stats or {}).items():
        rec.stats[path] = info
    return collect_node(ReplayHost(rec), SECTIONS, source="replay")


def on_gpu_node(sw: NodeFacts) -> NodeFacts:
    """``sw``'s software sections on the A100 capture's node (tests/fixtures/nvidia)."""
    gpu = a100()
    return gpu.model_copy(update={"cuda": sw.cuda, "containers": sw.containers, "dcgm": sw.dcgm})


def dir_info(path: str, mode: int) -> PathInfo:
    return PathInfo(path, exists=True, mode=0o040000 | mode, uid=0, gid=0, is_dir=True)
