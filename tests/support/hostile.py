"""Helpers of the untrusted-input tests: hostile "programs" that leave a marker file, and the shadow
configs, attributes and signed commits that would make git run them.

Every hostile program is a shell script that creates ``<markers>/<name>`` when it runs (and then
behaves plausibly: a textconv prints its input, a pager copies stdin). A test sets one of the
attacks up, runs code-trajectory, and asserts that ``markers`` stays empty while the commands
still answer.
"""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

from support import git, write

#: Names of the programs a hostile config points at, one per attack.
PROGRAMS = ("textconv", "textconv-info", "gpg", "clean", "smudge", "process", "external", "pager",
            "fsmonitor", "include", "includeif", "ssh", "credential", "askpass", "editor", "alternates",
            "driver-command")


def make_programs(where: Path) -> tuple[Path, Path]:
    """Write one marker script per :data:`PROGRAMS` into ``where/bin``; return ``(bin dir, marker dir)``."""
    bin_dir = where / "bin"
    markers = where / "markers"
    bin_dir.mkdir(parents=True, exist_ok=True)
    markers.mkdir(parents=True, exist_ok=True)
    for name in PROGRAMS:
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\ntouch '{markers}/{name}'\n"
                          'if [ -n "$1" ] && [ -f "$1" ]; then cat "$1"; else cat; fi\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bin_dir, markers


def hostile_config(bin_dir: Path) -> str:
    """Config text naming every program of ``bin_dir`` (no include: see :func:`include_config`)."""
    b = bin_dir
    return (f'[diff "x"]\n\ttextconv = {b}/textconv\n\tcommand = {b}/driver-command\n'
            f'[diff "python"]\n\ttextconv = {b}/textconv-info\n'
            f'[diff]\n\texternal = {b}/external\n'
            f'[log]\n\tshowSignature = true\n'
            f'[gpg]\n\tprogram = {b}/gpg\n'
            f'[gpg "openpgp"]\n\tprogram = {b}/gpg\n'
            f'[filter "x"]\n\tclean = {b}/clean\n\tsmudge = {b}/smudge\n\tprocess = {b}/process\n'
            f'[core]\n\tpager = {b}/pager\n\tfsmonitor = {b}/fsmonitor\n\tsshCommand = {b}/ssh\n'
            f'\taskPass = {b}/askpass\n\teditor = {b}/editor\n\talternateRefsCommand = {b}/alternates\n'
            f'\thooksPath = {b}\n'
            f'[pager]\n\tlog = {b}/pager\n\tshow = {b}/pager\n'
            f'[credential]\n\thelper = !{b}/credential\n')


def include_config(where: Path, bin_dir: Path) -> str:
    """``include.path`` and ``includeIf`` directives pointing at files that hold hostile keys."""
    inc = where / "included.cfg"
    inc.write_text(f'[diff "x"]\n\ttextconv = {bin_dir}/include\n[log]\n\tshowSignature = true\n'
                   f'[gpg]\n\tprogram = {bin_dir}/include\n[core]\n\tpager = {bin_dir}/include\n')
    inc_if = where / "included-if.cfg"
    inc_if.write_text(f'[diff "x"]\n\ttextconv = {bin_dir}/includeif\n[gpg]\n\tprogram = {bin_dir}/includeif\n'
                      f'[diff]\n\texternal = {bin_dir}/includeif\n')
    return f'[include]\n\tpath = {inc}\n[includeIf "gitdir:/"]\n\tpath = {inc_if}\n'


def poison_shadow(root: Path, where: Path) -> Path:
    """Append every hostile key, include and includeIf to ``root``'s shadow config, ``* diff=x filter=x`` to
    the project's ``.gitattributes`` and the shadow's ``info/attributes``, and sign the shadow tip.

    Returns:
        The marker directory (empty until a hostile program runs).
    """
    bin_dir, markers = make_programs(where)
    shadow = root / ".trajectory"
    with open(shadow / "config", "a") as config:
        config.write(hostile_config(bin_dir) + include_config(where, bin_dir))
    with open(shadow / "info" / "attributes", "a") as attributes:
        attributes.write("* diff=x filter=x\n")
    attrs = root / ".gitattributes"
    attrs.write_text((attrs.read_text() if attrs.exists() else "") + "* diff=x filter=x\n")
    sign_tips(shadow)
    return markers


FAKE_SIGNATURE = ("gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEEhostilehostilehostilehostilehostile\n"
                  " =abcd\n -----END PGP SIGNATURE-----\n")


def sign_tips(git_dir: Path) -> None:
    """Replace the tip of every ``refs/heads/shadow/*`` of ``git_dir`` by the same commit with a (fake)
    ``gpgsig`` header, so ``log.showSignature`` would run ``gpg.program`` on it."""
    refs = git(git_dir, "--git-dir=.", "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/shadow/")
    for line in refs.splitlines():
        ref, oid = line.split()
        body = git(git_dir, "--git-dir=.", "cat-file", "commit", oid)
        head, _, message = body.partition("\n\n")
        signed = head + "\n" + FAKE_SIGNATURE + "\n" + message
        new = subprocess.run(["git", "--git-dir=.", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=git_dir,
                             input=signed.encode(), capture_output=True, check=True).stdout.decode().strip()
        git(git_dir, "--git-dir=.", "update-ref", ref, new, oid)


def fired(markers: Path) -> list[str]:
    """The hostile programs that ran (their marker files), sorted."""
    return sorted(p.name for p in markers.iterdir())


def edit(root: Path, rel: str, text: str) -> None:
    """Write a file of the project (a convenience re-export of ``support.write``)."""
    write(root, rel, text)


def commit_history_into_project(attacker: Path) -> None:
    """The attacker's move: commit the poisoned ``.trajectory`` into the project's own history. Its nested-repository
    marker (``.trajectory/.git``) goes first, as git would only record the directory as an embedded repository, and
    a clone never carries a ``.git`` directory anyway."""
    shutil.rmtree(attacker / ".trajectory" / ".git", ignore_errors=True)
    git(attacker, "add", "-A")
    git(attacker, "add", "-f", ".trajectory")
    git(attacker, "commit", "-q", "-m", "helpful history included")
