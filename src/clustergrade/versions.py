"""Version parsing, one scheme per kind of version.  Versions are never compared
as strings.

``parse(scheme, text)`` returns a comparable :class:`Version` or None when the
text does not fit the scheme; callers turn None into UNKNOWN (an ERROR result),
never into a pass.

Schemes:

``nvdriver``  NVIDIA driver ``580.159.03``: an integer tuple; the branch is the
              first number (leading zeros are not semver, so no semver here).
``slurm``     ``24.05.8``, ``23.11.0rc1``, ``slurm-wlm 22.05.8-4+deb12u3``.
``mlnxfw``    ConnectX/BlueField firmware ``28.39.3560``: family, train, sub.
              Bulletins name trains without the family (``xx.39.3560``), so
              comparisons ignore the family unless a range names families.
``semver``    ``1.4.0-rc.3`` (a ``v`` prefix, Docker's ``+incompatible`` and a
              missing patch are tolerated).
``dpkg``      Debian package versions (epoch, upstream, revision).
``rpm``       RPM versions.
``numeric``   dotted integers of any length: CUDA ``13.1``, NCCL ``2.21.5``,
              DCGM ``4.5.3``, kernels ``6.8.0``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering
from typing import Any

SCHEMES = ("nvdriver", "slurm", "mlnxfw", "semver", "dpkg", "rpm", "numeric")


@total_ordering
@dataclass(frozen=True)
class Version:
    scheme: str
    text: str
    key: Any
    #: The release line the version belongs to (driver branch, Slurm
    #: major.minor, firmware train), where the scheme has one.
    line: str | None = None
    family: int | None = None

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version) or other.scheme != self.scheme:
            return NotImplemented
        return bool(self.key < other.key)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version) or other.scheme != self.scheme:
            return NotImplemented
        return bool(self.key == other.key)

    def __hash__(self) -> int:
        return hash((self.scheme, str(self.key)))

    def __str__(self) -> str:
        return self.text


_INTS = re.compile(r"^\d+(\.\d+)*$")


def _ints(text: str) -> tuple[int, ...] | None:
    if not _INTS.match(text):
        return None
    return tuple(int(p) for p in text.split("."))


def _pad(t: tuple[int, ...], n: int = 4) -> tuple[int, ...]:
    return t + (0,) * (n - len(t)) if len(t) < n else t


def _nvdriver(text: str) -> Version | None:
    t = _ints(text)
    if t is None or not (1 <= len(t) <= 4):
        return None
    return Version("nvdriver", text, _pad(t), line=str(t[0]))


_SLURM = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:-?(rc|pre)(\d+))?(?:[-+~].*)?$")


def _slurm(text: str) -> Version | None:
    m = _SLURM.match(text.removeprefix("slurm-wlm ").removeprefix("slurm "))
    if not m:
        return None
    major, minor, micro = int(m[1]), int(m[2]), int(m[3] or 0)
    # A pre-release sorts before its release: rc1 of 23.11.0 < 23.11.0.
    pre = (0, int(m[5])) if m[4] else (1, 0)
    return Version("slurm", text, (major, minor, micro, pre), line=f"{m[1]}.{m[2]}")


def _mlnxfw(text: str) -> Version | None:
    parts = text.split(".")
    if len(parts) == 3 and parts[0] in ("xx", "XX"):
        t = _ints(".".join(parts[1:]))
        if t is None:
            return None
        return Version("mlnxfw", text, t, line=str(t[0]), family=None)
    t = _ints(text)
    if t is None or len(t) != 3:
        return None
    return Version("mlnxfw", text, t[1:], line=str(t[1]), family=t[0])


_SEMVER_CLEAN = re.compile(
    r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"
)


def _semver(text: str) -> Version | None:
    from univers.versions import InvalidVersion, SemverVersion

    m = _SEMVER_CLEAN.match(text.strip())
    if not m:
        return None
    norm = f"{m[1]}.{m[2] or 0}.{m[3] or 0}{m[4] or ''}"
    try:
        v = SemverVersion(norm)
    except (InvalidVersion, ValueError):
        return None
    return Version("semver", text, v, line=f"{m[1]}.{m[2] or 0}")


def _dpkg(text: str) -> Version | None:
    from univers.versions import DebianVersion, InvalidVersion

    try:
        if not DebianVersion.is_valid(text):  # type: ignore[no-untyped-call]
            return None
        return Version("dpkg", text, DebianVersion(text))
    except (InvalidVersion, ValueError):
        return None


def _rpm(text: str) -> Version | None:
    from univers.versions import InvalidVersion, RpmVersion

    if not text or not re.match(r"^[0-9A-Za-z._+~^:-]+$", text):
        return None
    try:
        return Version("rpm", text, RpmVersion(text))
    except (InvalidVersion, ValueError):
        return None


def _numeric(text: str) -> Version | None:
    t = _ints(text)
    if t is None:
        return None
    return Version("numeric", text, _pad(t, 6), line=".".join(str(x) for x in t[:2]))


_PARSERS = {
    "nvdriver": _nvdriver,
    "slurm": _slurm,
    "mlnxfw": _mlnxfw,
    "semver": _semver,
    "dpkg": _dpkg,
    "rpm": _rpm,
    "numeric": _numeric,
}


def parse(scheme: str, text: str | None) -> Version | None:
    """Parse ``text`` under ``scheme``; None when it does not fit."""
    if scheme not in _PARSERS:
        raise ValueError(f"unknown version scheme {scheme!r}")
    if text is None:
        return None
    text = text.strip()
    if not text or len(text) > 128:
        return None
    return _PARSERS[scheme](text)


def is_valid(scheme: str, text: str) -> bool:
    return parse(scheme, text) is not None
