"""A full disk, made by the test: a small tmpfs of its own when the test may mount one
(root), else a limit on the size of the files the server process writes (RLIMIT_FSIZE,
lowered and raised from outside with prlimit).

On a tmpfs the database gets ENOSPC (`store_full`); under the file-size limit, EFBIG,
which SQLite reports as a refused write (`store_write_failed`).
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Disk:
    """A directory whose space (or the server's file sizes) the test controls."""

    path: Path
    tmpfs: bool

    @property
    def code(self) -> str:
        """The store's code for a write this disk refuses."""
        return "store_full" if self.tmpfs else "store_write_failed"

    def preexec(self) -> None:
        """In the server process: a refused write must be an error, not SIGXFSZ."""
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    def fill(self, pid: int, leave: int = 64 * 1024) -> None:
        """Leave about `leave` bytes for new writes."""
        if self.tmpfs:
            filler = self.path / "filler"
            with filler.open("ab") as f:
                while True:
                    st = os.statvfs(self.path)
                    free = st.f_bavail * st.f_frsize
                    if free <= leave:
                        break
                    try:
                        f.write(b"\0" * min(free - leave, 1 << 20))
                        f.flush()
                    except OSError:
                        break
            return
        biggest = max(p.stat().st_size for p in self.path.iterdir() if p.is_file())
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (biggest + leave, resource.RLIM_INFINITY))

    def free(self, pid: int) -> None:
        if self.tmpfs:
            (self.path / "filler").unlink(missing_ok=True)
            return
        resource.prlimit(pid, resource.RLIMIT_FSIZE,
                         (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def can_mount() -> bool:
    """Root may mount a tmpfs (HANDOFFS_FAULT_NO_MOUNT=1 tries the other way)."""
    return os.geteuid() == 0 and not os.environ.get("HANDOFFS_FAULT_NO_MOUNT")


@contextlib.contextmanager
def small_disk(path: Path, size: str = "8m") -> Iterator[Disk]:
    """A directory at `path` on a tmpfs of `size` (root), else a plain one whose server
    gets file-size limits (`Disk.fill`)."""
    path.mkdir(parents=True, exist_ok=True)
    if not can_mount() or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
            capture_output=True).returncode != 0:
        yield Disk(path, tmpfs=False)
        return
    try:
        yield Disk(path, tmpfs=True)
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)
