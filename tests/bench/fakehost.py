"""A host whose commands answer by program name, for probes whose argv holds
temporary paths (fio --directory=..., ib_write_bw <peer>)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from clustergrade.seam import CommandResult, DirListing, FileResult, LocalHost, PathInfo


class ByProgramHost:
    def __init__(
        self, answers: Mapping[str, str | None], dirs: Mapping[str, list[str]] | None = None
    ) -> None:
        #: program -> stdout; None means "not installed". Unlisted programs run for real.
        self.answers = answers
        self.dirs = dirs or {}
        self.calls: list[tuple[str, ...]] = []
        self._local = LocalHost(name="fake")

    @property
    def name(self) -> str:
        return "fake"

    def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult:
        args = tuple(argv)
        self.calls.append(args)
        if args[0] in self.answers:
            out = self.answers[args[0]]
            if out is None:
                return CommandResult(args, None, not_found=True)
            return CommandResult(args, 0, stdout=out.encode(), duration_s=0.5)
        return self._local.run(argv, timeout)

    def read(self, path: str, limit: int = 1 << 20) -> FileResult:
        return self._local.read(path, limit)

    def listdir(self, path: str) -> DirListing:
        if path in self.dirs:
            return DirListing(path, tuple(self.dirs[path]))
        return DirListing(path, None, error="no such directory")

    def stat(self, path: str) -> PathInfo:
        return self._local.stat(path)
