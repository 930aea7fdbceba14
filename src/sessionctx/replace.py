"""Replacing a user's session file without losing a line an agent writes meanwhile.

The original inode is kept as the backup (a hard link, not a copy): a process that still
holds the old file open appends to the backup, and after the swap the backup is checked for
such lines. The new file keeps the owner, group and mode of the old; a symlink's target is
replaced (the link stays); a file with other hard links or without write permission is
refused, since replacing it would split the links or override the user's choice. Size,
mtime and inode are compared immediately before the rename, so a change found there leaves
the file as it is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sessionctx.errors import SessionChanged, SessionctxError
from sessionctx.files import create_new, write_atomically
from sessionctx.live_writers import Undetectable, Writer, refuse_if_written, writers


class Refused(SessionctxError):
    """The file is not one sessionctx replaces (read-only, hard-linked, not a regular file)."""


Fingerprint = tuple[int, int, int, int]  # device, inode, size, mtime (ns)


def fingerprint(info: os.stat_result) -> Fingerprint:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


@dataclass(slots=True)
class Replaced:
    """Where the original is kept, and what a writer appended to it after the swap."""

    backup: str | None
    late_lines: int = 0  # lines that reached the old file after the swap: they are in backup
    late_from: int = 0  # the backup's line number of the first of them
    holders: list[Writer] = field(default_factory=list)  # still writing the old file

    def late_note(self, path: str) -> str | None:
        notes = []
        if self.late_lines:
            notes.append(f"{self.late_lines} line(s) were written to the old file after the "
                         f"swap: they are in {self.backup} from line {self.late_from}, not in "
                         f"{path}")
        if self.holders:
            names = ", ".join(str(w) for w in self.holders)
            notes.append(f"{names} still holds the old file open for writing: what it writes "
                         f"now goes to {self.backup} (from line {self.late_from}), not to "
                         f"{path}; quit it and repair again")
        return "; ".join(notes) or None


def check_replaceable(path: str, info: os.stat_result, *, links: bool = True) -> None:
    """Refuse a file whose replacement would not stay the user's file (`links`: one with
    other hard links, which only a replacement would split)."""
    if not stat.S_ISREG(info.st_mode):
        raise Refused(f"{path}: not a regular file; nothing was written")
    if not info.st_mode & stat.S_IWUSR:
        raise Refused(f"{path}: is read-only (mode {stat.S_IMODE(info.st_mode):04o}); nothing "
                      "was written (make it writable to change it)")
    if links and info.st_nlink > 1:
        raise Refused(f"{path}: has {info.st_nlink} hard links; replacing it would split "
                      "them, so nothing was written (copy it to a file of its own first)")


def default_backup(path: str, now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{path}.bak-{stamp}"


def replace(path: str, before: bytes, seen: Fingerprint, after: bytes, *,
            backup: str | bool = True, force: bool = False) -> Replaced:
    """Replace the session file `path` (read as `before`, stat `seen`) with `after`.

    `backup`: True keeps the original at `<file>.bak-<UTC timestamp>`, a string names the
    backup, False keeps none unless a writer appended to it after the swap. Raises
    SessionChanged when the file is not as read (nothing written), Refused or LiveWriter
    (nothing written, `force` skips the writer check) and OSError when it cannot be written.
    """
    real = os.path.realpath(path)
    info = os.stat(real)
    check_replaceable(path, info)
    if not force:
        refuse_if_written(real)
    _unchanged(path, real, before, seen)
    named = backup if isinstance(backup, str) else None
    # the backup is named in the terms the file was given in, unless a link was followed
    kept = _link(path if os.path.abspath(path) == real else real, named)
    try:
        if os.stat(kept).st_ino != seen[1]:
            raise SessionChanged(f"{path} was replaced while it was being repaired; nothing "
                                 "was written")

        def still(_: int = 0) -> None:
            if fingerprint(os.stat(real)) != seen:
                raise SessionChanged(f"{path} changed while it was being repaired (is its "
                                     "agent still running?); nothing was written")

        write_atomically(real, after, mode=stat.S_IMODE(info.st_mode),
                         owner=(info.st_uid, info.st_gid), check=still)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(kept)  # the file is as it was: a second name for it would only split it
        raise
    out = Replaced(kept, late_from=before.count(b"\n") + 1)
    with contextlib.suppress(Undetectable):  # the lines counted below still show the rest
        out.holders = writers(kept)  # first: one that lets go after this has written already
    _late(out, kept, before)
    if backup is False and not out.late_lines and not out.holders:
        with contextlib.suppress(OSError):
            os.unlink(kept)
        out.backup = None
    return out


def _unchanged(path: str, real: str, before: bytes, seen: Fingerprint) -> None:
    try:
        with open(real, "rb") as f:
            now_info = os.fstat(f.fileno())
            now = f.read(len(before) + 1)
    except OSError:
        now, now_info = b"", None
    if now != before or now_info is None or fingerprint(now_info) != seen:
        raise SessionChanged(f"{path} changed while it was being repaired (is its agent still "
                             "running?); nothing was written")


def _link(real: str, named: str | None) -> str:
    """A new name for the original inode (`real`: the file itself, not a link to it): `named`,
    or the first free default backup name.
    Where a hard link cannot be made (another file system), the original is copied."""
    if named is not None:
        return _link_or_copy(real, named)
    base = default_backup(real)
    for attempt in range(1000):
        candidate = base if attempt == 0 else f"{base}-{attempt}"
        try:
            return _link_or_copy(real, candidate)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no free backup name beside {real}")


def _link_or_copy(real: str, name: str) -> str:
    try:
        os.link(real, name, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        with open(real, "rb") as f:
            create_new(name, f.read())
    return name


def _late(out: Replaced, kept: str, before: bytes) -> None:
    """Count the lines a writer appended to the old inode (now the backup) after the swap."""
    try:
        with open(kept, "rb") as f:
            f.seek(len(before))
            extra = f.read()
    except OSError:
        return
    if extra:
        out.late_lines = extra.count(b"\n") + (0 if extra.endswith(b"\n") else 1)
