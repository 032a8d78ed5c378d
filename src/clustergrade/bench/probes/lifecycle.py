"""How long the things a job does before its first step take: importing
torch, making a venv and pip-installing a (local, tiny) wheel, pulling a
container image.

Slow shared filesystems show here first: ``import torch`` reads thousands of
small files.
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from pathlib import Path

from clustergrade.bench.model import Measurement
from clustergrade.bench.probes.base import ProbeContext, ProbeSkip, measurement

WHEEL_NAME = "cgbenchprobe"


def build_wheel(directory: Path) -> Path:
    """A minimal pure-Python wheel, so the pip timing needs no build backend or index."""
    dist = f"{WHEEL_NAME}-0.1.dist-info"
    files = {
        f"{WHEEL_NAME}/__init__.py": b"VALUE = 1\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {WHEEL_NAME}\nVersion: 0.1\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: clustergrade\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = directory / f"{WHEEL_NAME}-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def _import_torch(ctx: ProbeContext) -> Measurement | None:
    code = "import time; t = time.perf_counter(); import torch; print(time.perf_counter() - t)"
    res = ctx.host.run([sys.executable, "-c", code], timeout=600)
    if not res.ok:
        ctx.note(f"import torch: {res.describe()}")
        return None
    try:
        seconds = float(res.text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        ctx.note(f"import torch: unexpected output {res.text[:80]!r}")
        return None
    return measurement(
        ctx, "lifecycle", "lifecycle.import_torch", seconds, "s", python=sys.executable
    )


def _venv_pip(ctx: ProbeContext) -> list[Measurement]:
    venv = ctx.workdir / "lifecycle-venv"
    res = ctx.host.run([sys.executable, "-m", "venv", "--clear", str(venv)], timeout=600)
    if not res.ok:
        ctx.note(f"venv: {res.describe()}")
        return []
    out = [
        measurement(
            ctx, "lifecycle", "lifecycle.venv_create", res.duration_s, "s", directory=str(venv)
        )
    ]
    wheel = build_wheel(ctx.workdir)
    pip = ctx.host.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--no-index",
            "--no-deps",
            "--disable-pip-version-check",
            "--no-cache-dir",
            "-q",
            str(wheel),
        ],
        timeout=600,
    )
    if not pip.ok:
        ctx.note(f"pip install: {pip.describe()}")
        return out
    out.append(
        measurement(
            ctx,
            "lifecycle",
            "lifecycle.pip_install_local_wheel",
            pip.duration_s,
            "s",
            wheel=wheel.name,
        )
    )
    return out


def _pull(ctx: ProbeContext) -> Measurement | None:
    for tool, argv in (
        ("docker", ["docker", "pull", "-q"]),
        ("enroot", ["enroot", "import", "-o"]),
    ):
        if ctx.host.run([tool, "--version"], timeout=10).not_found:
            continue
        if not ctx.pull_image:
            ctx.note(f"container pull: {tool} present, no image given (--pull-image)")
            return None
        if tool == "enroot":
            target = ctx.workdir / "pull.sqsh"
            argv = [*argv, str(target), f"docker://{ctx.pull_image}"]
        else:
            argv = [*argv, ctx.pull_image]
        res = ctx.host.run(argv, timeout=1800)
        if not res.ok:
            ctx.note(f"container pull: {res.describe()}")
            return None
        return measurement(
            ctx,
            "lifecycle",
            "lifecycle.container_pull",
            res.duration_s,
            "s",
            tool=tool,
            image=ctx.pull_image,
        )
    ctx.note("container pull: neither docker nor enroot is installed")
    return None


def run(ctx: ProbeContext) -> list[Measurement]:
    out: list[Measurement] = []
    if m := _import_torch(ctx):
        out.append(m)
    out += _venv_pip(ctx)
    if m := _pull(ctx):
        out.append(m)
    if not out:
        raise ProbeSkip("; ".join(ctx.notes) or "nothing to time")
    return out
