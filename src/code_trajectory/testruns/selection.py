"""Which tests a command selects: its :class:`~code_trajectory.testruns.scope.Scope`, read from the command line.

pytest's arguments are read option by option (:func:`pytest_selection`): positional arguments are paths or node
ids; ``-k``, ``-m``, ``--deselect``, ``--ignore``, ``--ignore-glob``, ``--lf``, ``--sw`` and ``--co`` narrow the
selection; the options that take a value are skipped with it (pytest's own and common plugins': ``-p``, ``-n``,
``--cov``, ...). Other runners are read only for their bare whole-suite commands (:data:`WHOLE_SUITE`: ``npm test``,
``cargo test``, ``go test ./...``, ``mvn test``, ``dotnet test``...: a runner's own default run, or the package
manager's ``test`` script, with no selection); anything else (``make test`` too: a target can run anything) is an
unknown scope, never the full suite, unless the caller declares it the full suite (:func:`declared_scope`:
``code-trajectory test --full-suite``, ``record_test_result(full_suite=true)``).

Pure functions over the words of the command and two directories; the only I/O is checking that a positional
argument exists (an option's value we do not know of is not a path).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from code_trajectory.testruns.scope import UNKNOWN, Scope

#: Options that select tests and take a value, with the name they are recorded under.
SELECT_VALUE = {"-k": "-k", "--keyword": "-k", "-m": "-m", "--deselect": "--deselect", "--ignore": "--ignore",
                "--ignore-glob": "--ignore-glob"}
#: Flags that select tests, with the name they are recorded under.
SELECT_FLAGS = {"--lf": "--lf", "--last-failed": "--lf", "--sw": "--sw", "--stepwise": "--sw",
                "--sw-skip": "--sw-skip", "--stepwise-skip": "--sw-skip", "--co": "--collect-only",
                "--collect-only": "--collect-only"}
#: Options (pytest 9's and common plugins') whose value is the next word; the rest are taken as flags.
VALUE_OPTIONS = frozenset({
    "-p", "-c", "-o", "-W", "-n", "-r", "--tb", "--maxfail", "--durations", "--durations-min", "--rootdir",
    "--basetemp", "--junitxml", "--junit-xml", "--junit-prefix", "--confcutdir", "--cov", "--cov-report",
    "--cov-config", "--cov-fail-under", "--log-level", "--log-file", "--log-file-level", "--log-format",
    "--log-date-format", "--log-cli-level", "--log-cli-format", "--dist", "--numprocesses", "--maxprocesses",
    "--timeout", "--color", "--capture", "--import-mode", "--override-ini", "--randomly-seed", "--reruns",
    "--reruns-delay", "--html", "--tx", "--rsyncdir", "--count", "--config-file", "--inifile",
    "--trajectory-project", "--lfnf", "--last-failed-no-failures", "--show-capture", "--assert", "--doctest-glob",
    "--pdbcls", "--hypothesis-seed", "--hypothesis-profile", "--code-highlight", "--verbosity", "--deselect",
})
#: Short options taking a value (``-k EXPR``, ``-kEXPR``, ``-n4``, ``-ra``, ``-p no:cacheprovider``).
SHORT_VALUE = frozenset("kmpcoWnr")
#: Options after which the positional arguments are not paths.
NOT_PATHS = {"--pyargs": "--pyargs names packages, not paths"}

_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?(?:\.exe)?$")
#: Why another runner's command has an unknown scope (its selection is not read), and the way out.
UNREAD = "its selection is not read; if it runs the whole suite, declare it: CLI `--full-suite`, full_suite=true"
#: Bare commands that run a whole suite, as words (``python`` for any interpreter name).
WHOLE_SUITE = frozenset({
    ("npm", "test"), ("npm", "t"), ("npm", "run", "test"), ("yarn", "test"), ("yarn", "run", "test"),
    ("pnpm", "test"), ("pnpm", "run", "test"), ("bun", "run", "test"), ("cargo", "test"), ("cargo", "nextest", "run"),
    ("go", "test", "./..."), ("jest",), ("npx", "jest"), ("vitest", "run"), ("npx", "vitest", "run"),
    ("node", "--test"), ("bun", "test"), ("deno", "test"), ("python", "-m", "unittest"),
    ("python", "-m", "unittest", "discover"), ("mvn", "test"), ("mvnw", "test"), ("gradle", "test"),
    ("gradlew", "test"), ("dotnet", "test"), ("ctest",), ("mix", "test"), ("rspec",), ("bundle", "exec", "rspec"),
    ("phpunit",),
})
#: Flags that change how a whole-suite command reports or resolves its dependencies, not what it runs.
HARMLESS_FLAGS = frozenset({"-v", "-q", "--verbose", "--quiet", "--silent", "-race", "--ci", "--workspace",
                            "-count=1", "--no-color", "--color", "--offline", "--locked", "--frozen"})


def pytest_selection(args: Sequence[str]) -> tuple[list[str], list[str], str | None]:
    """Read pytest's arguments (after ``pytest``).

    Returns:
        ``(positional arguments as given, selection filters as typed, problem)``; ``problem`` is None, or why the
        selection cannot be read (then the other two are empty).
    """
    paths: list[str] = []
    filters: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            paths.extend(args[i:])
            break
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name in NOT_PATHS:
                return [], [], NOT_PATHS[name]
            if name in SELECT_FLAGS:
                filters.append(SELECT_FLAGS[name])
            elif name in VALUE_OPTIONS or name in SELECT_VALUE:
                if not eq:
                    if i >= len(args):
                        break
                    value, i = args[i], i + 1
                if name in SELECT_VALUE:
                    filters.append(f"{SELECT_VALUE[name]} {shlex.quote(value)}")
            continue
        if arg.startswith("-") and len(arg) > 1:
            for j in range(1, len(arg)):  # combined short options: -xvs, -kfoo, -n4
                if arg[j] in SHORT_VALUE:
                    value = arg[j + 1:]
                    if not value and i < len(args):
                        value, i = args[i], i + 1
                    if f"-{arg[j]}" in SELECT_VALUE:
                        filters.append(f"-{arg[j]} {shlex.quote(value)}")
                    break
            continue
        paths.append(arg)
    return paths, filters, None


def pytest_index(argv: Sequence[str]) -> int | None:
    """Where ``pytest`` (or ``py.test``) is in a command line (``python -m pytest``, ``uv run pytest``), or None."""
    for i, word in enumerate(argv[:8]):
        if os.path.basename(word) in ("pytest", "py.test", "pytest.exe"):
            return i
    return None


def relative_to_project(path: str, cwd: Path, root: Path) -> str | None:
    """``path`` (maybe a node id ``file::name``) given in ``cwd``, as a ``/``-separated path relative to ``root``;
    None when it lies outside the project."""
    file_part, sep, node = path.partition("::")
    full = os.path.normpath(os.path.join(cwd, file_part))
    rel = os.path.relpath(full, root)
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        return None
    return rel.replace(os.sep, "/") + sep + node


def pytest_scope(args: Sequence[str], cwd: Path, root: Path, *, check_paths: bool = True) -> Scope:
    """The scope of pytest run in ``cwd`` with ``args`` (after ``pytest``) in the project ``root``.

    No positional argument selects ``cwd`` (the full suite when ``cwd`` is the root). With ``check_paths``, a
    positional argument that does not exist is taken for the value of an option we do not know.
    """
    given, filters, problem = pytest_selection(args)
    if problem:
        return Scope.unknown(problem)
    cwd, root = Path(os.path.abspath(cwd)), Path(os.path.abspath(root))
    chosen = [p for p in given if not check_paths or os.path.lexists(os.path.join(cwd, p.partition("::")[0]))]
    if given and not chosen:
        return Scope.unknown(f"none of {', '.join(given[:3])} exists")
    paths = []
    for path in chosen or ["."]:
        rel = relative_to_project(path, cwd, root)
        if rel is None:
            return Scope.unknown(f"{path} is outside the project")
        paths.append(rel)
    if chosen and set(paths) == set(ini_testpaths(root) or ()):
        paths = ["."]  # `pytest tests` where testpaths = ["tests"]: the whole suite
    return Scope.partial(paths, filters)


def _words(value: object) -> list[str]:
    if isinstance(value, str):
        return value.split()
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def ini_testpaths(root: Path) -> list[str] | None:
    """The ``testpaths`` of pytest's configuration file in ``root`` (see :func:`ini_words`), normalised like scope
    paths; None when unset or unreadable. Globs are not expanded (such an entry never equals a path)."""
    import posixpath

    values = ini_words(root, "testpaths")
    return [posixpath.normpath(v) for v in values] or None if values is not None else None


def ini_words(root: Path, key: str) -> list[str] | None:
    """The words of ``key`` in pytest's configuration file in ``root`` (the first of ``pytest.ini``,
    ``.pytest.ini``, ``pyproject.toml`` with a ``[tool.pytest.ini_options]`` or ``[tool.pytest]`` table,
    ``tox.ini`` ``[pytest]``, ``setup.cfg`` ``[tool:pytest]``: pytest's order), split at white space; None when the
    file is unreadable or there is none, ``[]`` when the key is unset."""
    import configparser
    import tomllib

    try:
        for name, section in (("pytest.ini", "pytest"), (".pytest.ini", "pytest"), ("pyproject.toml", None),
                              ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
            path = root / name
            if not path.is_file() or path.stat().st_size > 1 << 20:
                continue
            if section is None:
                tool = tomllib.loads(path.read_text("utf-8")).get("tool", {})
                table = tool.get("pytest") if isinstance(tool, dict) else None
                if not isinstance(table, dict):
                    continue
                options = table.get("ini_options", table)
                return _words(options.get(key) if isinstance(options, dict) else None)
            parser = configparser.ConfigParser(interpolation=None)
            parser.read_string(path.read_text("utf-8"))
            if not parser.has_section(section):
                if name.endswith("pytest.ini"):
                    return []  # pytest.ini is pytest's configuration even without the section
                continue
            return _words(parser.get(section, key, fallback=""))
    except (OSError, ValueError, configparser.Error):  # tomllib.TOMLDecodeError is a ValueError
        return None
    return None


#: The typed filters that deselect tests (pytest counts them ``N deselected``), by the name they are recorded under.
DESELECTING = frozenset({"-k", "-m", "--deselect", "--lf", "--sw", "--sw-skip"})


def with_deselected(scope: Scope, deselected: int, root: Path) -> Scope:
    """``scope``, read from a pytest command run in the project ``root`` whose summary counted ``deselected`` tests:
    partial (``N deselected``, as the pytest plugin records it) when neither a filter read from the command nor the
    options of the ini file's ``addopts`` (which define the suite: ``-m 'not slow'``) deselected them: a conftest or
    a plugin did. An unreadable ini file explains nothing."""
    if deselected <= 0 or scope.kind == UNKNOWN or any(f.split(" ", 1)[0] in DESELECTING for f in scope.filters):
        return scope
    addopts = ini_words(root, "addopts") or []
    if any(f.split(" ", 1)[0] in DESELECTING for f in pytest_selection(addopts)[1]):
        return scope
    return Scope.partial(scope.paths, [*scope.filters, f"{deselected} deselected"])


def command_scope(argv: Sequence[str], cwd: Path, root: Path, *, check_paths: bool = True,
                  addopts: str = "") -> Scope:
    """The scope of the test command ``argv`` run in ``cwd``, in the project ``root`` (see the module docstring).

    ``addopts`` is the ``PYTEST_ADDOPTS`` the command runs with: pytest reads its words before the command line's,
    so a path or ``-k`` there selects as typed ones do (unknown scope when it cannot be split into words)."""
    at = pytest_index(argv)
    if at is not None:
        try:
            added = shlex.split(addopts)
        except ValueError:
            return Scope.unknown("PYTEST_ADDOPTS cannot be split into words")
        return pytest_scope([*added, *argv[at + 1:]], cwd, root, check_paths=check_paths)
    words = tuple("python" if _PYTHON.match(os.path.basename(w)) else os.path.basename(w) if i == 0 else w
                  for i, w in enumerate(argv) if w not in HARMLESS_FLAGS)
    if words in WHOLE_SUITE:
        inside = relative_to_project(".", Path(cwd), Path(root))
        return Scope.full() if inside == "." else Scope.partial([inside]) if inside else Scope.unknown(
            "run outside the project")
    return Scope.unknown(UNREAD)


def declared_scope(read: Scope, full_suite: bool, addopts: str = "") -> Scope:
    """The scope of a run whose caller declared (``full_suite``) that its command runs the whole suite: the full
    suite when the command's selection is not read at all (``read``, the unknown scope :data:`UNREAD`: a script of
    the project's own, ``./run_tests.sh``), else ``read`` as it is: a selection read from the command (``pytest
    tests/test_a.py``) is what ran, and a reading that found it unknowable (a path outside the project,
    ``--pyargs``) stands, whatever is declared.

    ``addopts``: the ``PYTEST_ADDOPTS`` of a run that ran pytest (``""`` otherwise): a selection there (a path,
    ``-k``, ``--deselect``...) applies to whatever pytest the script runs, so the declared run is partial (its
    paths said as filters: relative to a directory the script chose), or unknown when the words cannot be read."""
    if not (full_suite and read.kind == UNKNOWN and read.note == UNREAD):
        return read
    try:
        paths, filters, problem = pytest_selection(shlex.split(addopts))
    except ValueError:
        return Scope.unknown("PYTEST_ADDOPTS cannot be split into words")
    if problem is not None:
        return Scope.unknown(f"PYTEST_ADDOPTS: {problem}")
    if paths or filters:
        return Scope.partial((), [*filters, *(f"PYTEST_ADDOPTS {path}" for path in paths)])
    return Scope.full()


def command_line_scope(command: str, root: Path) -> Scope:
    """The scope of a command reported as one line (``record_test_result``), taken as run at the project root.

    Paths are not checked (the files may have changed since).
    """
    try:
        argv = shlex.split(command)
    except ValueError:
        return Scope.unknown("the command cannot be split into words")
    if not argv:
        return Scope.unknown()
    return command_scope(argv, root, root, check_paths=False)


def parse_query(text: str | None) -> Scope:
    """The scope a caller asks about: None, ``""``, ``full`` or ``full suite`` → the full suite; otherwise pytest
    selection arguments relative to the project root (``tests/test_a.py``, ``tests/a.py::test_x -k login``).

    Raises:
        ValueError: the text cannot be split as shell words, or names no selection.
    """
    if text is None or text.strip().lower() in ("", "full", "full suite", "all"):
        return Scope.full()
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"cannot read scope {text!r}: {exc}") from None
    paths, filters, problem = pytest_selection(words)
    if problem:
        raise ValueError(f"cannot read scope {text!r}: {problem}")
    return Scope.partial(paths, filters)
