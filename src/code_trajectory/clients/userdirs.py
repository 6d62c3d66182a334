"""Per-user directories of MCP clients, from the environment alone (so tests can point them at temp dirs).

Each function takes the environment mapping and the client's title (for the one-line error) and returns an
absolute :class:`~pathlib.Path`. The rules are the clients' documented ones: ``~`` is ``HOME`` (``USERPROFILE``
on Windows), the XDG config directory is ``XDG_CONFIG_HOME`` when absolute (the XDG Base Directory
Specification says to ignore a relative value) else ``~/.config``, and Windows' roaming application data is
``APPDATA``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from code_trajectory.core.errors import InvalidArgumentError


def home(env: Mapping[str, str], platform: str, title: str) -> Path:
    """The user's home directory: ``USERPROFILE`` (then ``HOME``) on Windows, ``HOME`` elsewhere.

    Raises:
        InvalidArgumentError: the variable is not set.
    """
    names = ("USERPROFILE", "HOME") if platform == "win32" else ("HOME",)
    for name in names:
        if env.get(name):
            return Path(env[name])
    raise InvalidArgumentError(f"cannot locate {title}'s config: {names[0]} is not set; set {names[0]}")


def xdg_config(env: Mapping[str, str], platform: str, title: str) -> Path:
    """``XDG_CONFIG_HOME`` when set and absolute, else ``~/.config``."""
    xdg = env.get("XDG_CONFIG_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg)
    return home(env, platform, title) / ".config"


def appdata(env: Mapping[str, str], platform: str, title: str) -> Path:
    """Windows' roaming application data: ``APPDATA``, else ``%USERPROFILE%\\AppData\\Roaming``.

    Raises:
        InvalidArgumentError: neither is set.
    """
    if env.get("APPDATA"):
        return Path(env["APPDATA"])
    if env.get("USERPROFILE"):
        return Path(env["USERPROFILE"]) / "AppData" / "Roaming"
    raise InvalidArgumentError(f"cannot locate {title}'s config: APPDATA is not set; set APPDATA to your roaming "
                               "application data folder")
