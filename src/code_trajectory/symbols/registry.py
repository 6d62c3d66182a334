"""Which language module handles a file: :func:`language_for`.

Language modules are imported on first use, so importing :mod:`code_trajectory.symbols`
imports no grammar, and asking for one language imports only that language's module
(which in turn imports its grammar package on its first parse). Each language object
is a process-wide singleton holding one parser per thread.
"""

from __future__ import annotations

import importlib
import posixpath
import threading

from .base import LanguageSupport

#: language -> (its object, ``"module:attribute"`` under ``code_trajectory.symbols.languages``, imported on first
#: use: a string so that no grammar is imported before a file needs it; extensions; file names)
_TABLE: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "python": ("python:LANGUAGE", (".py", ".pyi", ".pyw"), ("SConstruct", "SConscript")),
    "javascript": ("javascript:LANGUAGE", (".js", ".mjs", ".cjs", ".jsx"), ()),
    "typescript": ("typescript:TYPESCRIPT", (".ts", ".mts", ".cts"), ()),
    "tsx": ("typescript:TSX", (".tsx",), ()),
    "go": ("go:LANGUAGE", (".go",), ()),
    "rust": ("rust:LANGUAGE", (".rs",), ()),
    "java": ("java:LANGUAGE", (".java",), ()),
    "c": ("c:LANGUAGE", (".c", ".h"), ()),
    "cpp": ("cpp:LANGUAGE", (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp", ".inl"), ()),
    "ruby": ("ruby:LANGUAGE", (".rb", ".rake", ".gemspec", ".ru"), ("Rakefile", "Gemfile", "Guardfile", "Vagrantfile")),
    "csharp": ("csharp:LANGUAGE", (".cs",), ()),
    "php": ("php:LANGUAGE", (".php", ".phtml"), ()),
}

_BY_EXTENSION: dict[str, str] = {ext: key for key, (_, exts, _) in _TABLE.items() for ext in exts}
_BY_FILENAME: dict[str, str] = {fn: key for key, (_, _, fns) in _TABLE.items() for fn in fns}
_LOADED: dict[str, LanguageSupport] = {}
_LOCK = threading.Lock()


def supported_extensions() -> tuple[str, ...]:
    """Return every file extension (lower case, with the dot) that has a language module."""
    return tuple(sorted(_BY_EXTENSION))


def language_for(path: str) -> LanguageSupport | None:
    """Return the language module for a file, or ``None`` when no module handles it.

    Args:
        path: the file's path relative to the project root (``/`` separators; only the base
            name is looked at). The extension is matched case-insensitively (``.H`` is C;
            a ``.h`` header is C, analyzed as C++ when its lines show C++: :mod:`.languages.c`).

    Returns:
        A :class:`~code_trajectory.symbols.base.LanguageSupport`, shared by every caller.
    """
    base = posixpath.basename(path.replace("\\", "/"))
    key = _BY_FILENAME.get(base)
    if key is None:
        ext = posixpath.splitext(base)[1].lower()
        key = _BY_EXTENSION.get(ext) if ext else None
    if key is None:
        return None
    return _load(key)


def _load(key: str) -> LanguageSupport:
    language = _LOADED.get(key)
    if language is None:
        with _LOCK:
            language = _LOADED.get(key)
            if language is None:
                module, _, attribute = _TABLE[key][0].partition(":")
                language = getattr(importlib.import_module(f"{__package__}.languages.{module}"), attribute)
                _LOADED[key] = language
    return language
