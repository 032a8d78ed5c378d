"""Facts for the security cases: the CI VM capture replayed, optionally with
real public captures (tests/fixtures/security/public/) placed on top.  Each
builder says what it changes."""

from __future__ import annotations

import stat as statmod
from typing import Any

from clustergrade.facts.node import NodeFacts
from clustergrade.seam import PathInfo
from tests.helpers import FIXTURES
from tests.security.fixture_tree import tree_facts

PUBLIC = FIXTURES / "security" / "public"
CI = "ci-vm capture (Firecracker VM, Debian 12, no GPU, audit ran as root)"

_TYPES = {"c": statmod.S_IFCHR, "d": statmod.S_IFDIR, "-": statmod.S_IFREG}


def public(name: str) -> str:
    return (PUBLIC / name).read_text()


def perms_of(symbolic: str) -> int:
    """'crw-rw-rw-' -> 0o666 (the permission part of an ls -l mode)."""
    bits = 0
    for i, ch in enumerate(symbolic[1:10]):
        if ch != "-":
            bits |= 1 << (8 - i)
    return bits


def ls_entries(listing: str) -> dict[str, str]:
    """name -> symbolic mode, from the entries of an ``ls -l`` listing."""
    out: dict[str, str] = {}
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) >= 9 and parts[0][0] in _TYPES and parts[-1] not in (".", ".."):
            out[parts[-1]] = parts[0]
    return out


def node(path: str, symbolic: str, *, uid: int = 0, gid: int = 0, access: bool = True) -> PathInfo:
    return PathInfo(
        path,
        exists=True,
        mode=_TYPES[symbolic[0]] | perms_of(symbolic),
        uid=uid,
        gid=gid,
        is_char_device=symbolic[0] == "c",
        readable=access,
        writable=access,
    )


def ci(**override: Any) -> NodeFacts:
    return tree_facts("ci-vm", **override)


def as_user(facts: NodeFacts, euid: int = 1000) -> NodeFacts:
    """The same facts as an ordinary account would record them (uid/euid changed)."""
    sec = facts.security
    assert sec is not None
    upd = {"uid": euid, "euid": euid, "gid": euid, "groups": [euid]}
    return facts.model_copy(update={"security": sec.model_copy(update=upd)})


def imex_pr375(**override: Any) -> NodeFacts:
    """ci-vm plus the /dev/nvidia-caps-imex-channels listing pasted in
    NVIDIA/nvidia-container-toolkit#375 (three channels, crw-rw-rw- root root)."""
    entries = ls_entries(public("imex-channels-ls-la.txt"))
    base = "/dev/nvidia-caps-imex-channels"
    stats = {f"{base}/{n}": node(f"{base}/{n}", m) for n, m in entries.items()}
    stats.update(override.pop("stats", {}))
    return ci(dirs={base: sorted(entries)}, stats=stats, **override)


def gpu_node(version: str, modules: str | None) -> NodeFacts:
    """ci-vm with a real /proc/driver/nvidia/version and (optionally) a real
    lsmod excerpt placed at /proc/modules; /sys/module is left as captured."""
    files: dict[str, str] = {"/proc/driver/nvidia/version": public(version)}
    if modules is not None:
        files["/proc/modules"] = public(modules)
    return ci(files=files)
