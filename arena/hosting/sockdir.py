"""The private folder a match host keeps its referee's Unix socket in, and the sweep of folders
that hosts killed without a chance to clean up (SIGKILL, OOM) left behind.

A folder is ``<tmp>/arena-host-<pid>-n<namespace>-<random>``: ``<pid>`` is the process that made
it, ``<namespace>`` its pid namespace (:func:`arena.pidspace.pid_namespace`).  A host removes its
own folder when it closes (:meth:`arena.hosting.host.MatchHost.close`); a host that starts
removes every folder of this shape that belongs to this user, was made in its own pid namespace
and whose process no longer exists, so folders of killed workers do not pile up in ``/tmp``.  A
folder whose process is alive (or whose pid was reused by a live process) is never touched, nor
one made in another pid namespace: a container that shares ``/tmp`` but not the pids (``unshare
--pid``) saw another arena's live workers as dead and removed the folder of the socket their bots
were about to dial (both bots of the next match "crashed before connecting").  Folders of older
versions, ``arena-host-<pid>-<random>``, are judged by their pid alone, as they were.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from arena.pidspace import judged_here, maker_of, maker_tag

PREFIX = "arena-host-"
SOCKET_NAME = "referee.sock"
"""The referee's socket in the folder."""


def make_sock_dir(tmp: str | None = None) -> Path:
    """A new private folder (mode 0700) for this process's referee socket."""
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{maker_tag()}", dir=tmp))


SocketId = tuple[int, int, int, int]
"""Device and inode of a socket folder and of the socket in it."""


def socket_id(sock_dir: Path) -> SocketId | None:
    """What the folder ``sock_dir`` and its socket are now (device and inode of each, not
    following symlinks), or None when either is missing or is not what it should be (a folder and
    a socket of this user's).  The same value later means the very folder and socket a host
    bound: not a folder of the same name that another user made after a /tmp cleaner removed it
    (/tmp lets anyone create any free name), with a listener of theirs in it that the bots would
    dial."""
    try:
        folder = os.lstat(sock_dir)
        sock = os.lstat(sock_dir / SOCKET_NAME)
    except OSError:
        return None
    if not stat.S_ISDIR(folder.st_mode) or not stat.S_ISSOCK(sock.st_mode):
        return None
    if folder.st_uid != os.getuid() or sock.st_uid != os.getuid():  # (an inode number reused)
        return None
    return folder.st_dev, folder.st_ino, sock.st_dev, sock.st_ino


def folder_id(sock_dir: Path) -> tuple[int, int] | None:
    """Device and inode of the folder ``sock_dir`` (not following a symlink), or None when it is
    missing or not a folder."""
    try:
        folder = os.lstat(sock_dir)
    except OSError:
        return None
    return (folder.st_dev, folder.st_ino) if stat.S_ISDIR(folder.st_mode) else None


def remove_own(sock_dir: Path, made: tuple[int, int] | None) -> None:
    """Remove the folder ``sock_dir`` if it is still the one that was made (``made``, its
    :func:`folder_id` then): a folder of that name made by someone else since is left alone."""
    if made is not None and folder_id(sock_dir) == made:
        shutil.rmtree(sock_dir, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's counts: signalling it is refused)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def sweep_stale(tmp: str | None = None) -> list[Path]:
    """Remove this user's ``arena-host-*`` folders made in this pid namespace (or by an older
    version, without one) whose process is gone; return them.  Never raises: a folder that cannot
    be read or removed is left as it is."""
    root = Path(tmp if tmp is not None else tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    uid = os.getuid()
    for entry in entries:
        maker = maker_of(entry.name, PREFIX)
        if maker is None or not judged_here(maker[1]) or maker[0] == os.getpid():
            continue
        pid = maker[0]
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue
        if _alive(pid):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        if not os.path.exists(entry.path):
            removed.append(Path(entry.path))
    return removed
