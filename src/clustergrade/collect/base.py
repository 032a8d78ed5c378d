"""The collector registry and the context each collector gets.

A collector is a function ``(ctx: CollectContext) -> <Section>`` registered with
:func:`collector` under the name of the :class:`NodeFacts` field it fills.  It
reads the node only through ``ctx`` (the command seam), records what it could
not find out with :meth:`CollectContext.error`, and never judges.  An exception
escaping a collector is caught by the runner and recorded; it never ends the
audit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from clustergrade.facts.base import CollectorError, Tool
from clustergrade.seam import CommandResult, DirListing, FileResult, Host, PathInfo

S = TypeVar("S", bound=BaseModel)
CollectorFunc = Callable[["CollectContext"], Any]


@dataclass(frozen=True)
class CollectorSpec:
    name: str
    func: CollectorFunc
    #: Sections whose facts this collector reads (it runs after them).
    after: tuple[str, ...] = ()


_REGISTRY: dict[str, CollectorSpec] = {}


def collector(name: str, after: Sequence[str] = ()) -> Callable[[CollectorFunc], CollectorFunc]:
    """Register a collector for the NodeFacts field ``name``."""

    def deco(func: CollectorFunc) -> CollectorFunc:
        if name in _REGISTRY and _REGISTRY[name].func is not func:
            raise ValueError(f"collector {name!r} registered twice")
        _REGISTRY[name] = CollectorSpec(name, func, tuple(after))
        return func

    return deco


def registered() -> dict[str, CollectorSpec]:
    """All collectors, importing the built-in modules on first use."""
    import clustergrade.collect.builtin  # noqa: F401  (registers on import)

    return dict(_REGISTRY)


class CollectContext:
    """What a collector may use: the host seam, a place for errors, and the
    sections collected before it."""

    def __init__(self, host: Host, collector_name: str, done: dict[str, Any] | None = None):
        self.host = host
        self.collector = collector_name
        self.errors: list[CollectorError] = []
        self._done = done or {}
        self._lock = threading.Lock()

    # -- results of earlier collectors -------------------------------------
    def section(self, name: str) -> Any:
        """A section collected earlier (declared in ``after``), or None."""
        return self._done.get(name)

    # -- the seam ----------------------------------------------------------
    def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult:
        return self.host.run(argv, timeout)

    def read(self, path: str, limit: int | None = None) -> FileResult:
        return self.host.read(path) if limit is None else self.host.read(path, limit)

    def listdir(self, path: str) -> DirListing:
        return self.host.listdir(path)

    def stat(self, path: str) -> PathInfo:
        return self.host.stat(path)

    # -- conveniences ------------------------------------------------------
    def read_text(self, path: str, *, required: bool = False) -> str | None:
        """The file's text, or None.  A missing file is silent unless
        ``required``; any other failure (permission, not recorded) is an error."""
        res = self.host.read(path)
        if res.content is not None:
            return res.text
        if required or not res.missing:
            self.error(f"cannot read {path}: {res.error}", path=path)
        return None

    def read_value(self, path: str) -> str | None:
        """A one-line sysfs/procfs value, stripped."""
        text = self.read_text(path)
        return None if text is None else text.strip()

    def entries(self, path: str) -> tuple[str, ...]:
        """Directory entries; a missing directory gives (), other failures an error."""
        res = self.host.listdir(path)
        if res.entries is not None:
            return res.entries
        if res.error not in (None, "No such file or directory", "no such file"):
            self.error(f"cannot list {path}: {res.error}", path=path)
        return ()

    def output(self, argv: Sequence[str], timeout: float = 10.0) -> str | None:
        """Stdout of a command that must succeed; None when it is not
        installed (silent) or failed (recorded as an error)."""
        res = self.host.run(argv, timeout)
        if res.ok:
            return res.text
        if not res.not_found:
            self.error(res.describe(), argv=list(argv))
        return None

    def tool_version(
        self,
        name: str,
        argv: Sequence[str],
        parse: Callable[[str], str | None],
        timeout: float = 10.0,
    ) -> Tool:
        """Run a ``--version``-style command and parse its version.

        Not installed -> ``installed=False``; ran but unparseable -> installed
        with ``version=None`` and an error recorded.
        """
        res = self.host.run(argv, timeout)
        if res.not_found:
            return Tool(name=name, installed=False)
        if not res.ran:
            self.error(res.describe(), argv=list(argv))
            return Tool(name=name, installed=True, source=" ".join(argv))
        version = parse(res.text + "\n" + res.err_text)
        if version is None:
            self.error(f"{name}: could not parse a version from {' '.join(argv)}", argv=list(argv))
        return Tool(name=name, installed=True, version=version, source=" ".join(argv))

    def error(
        self, message: str, *, argv: list[str] | None = None, path: str | None = None
    ) -> None:
        with self._lock:
            self.errors.append(
                CollectorError(collector=self.collector, message=message, argv=argv, path=path)
            )
