"""Tokens of ``get_file_trajectory`` against ``git log -p`` on real histories, and what each one tells.

For each file of a real repository (given as ``REPO:PATH``; default: histories fetched under /work/.mirror),
its last ``--commits`` commits touching it are replayed into a fresh project, one ``checkpoint`` each (the
file at each commit, at its path of that commit). Then, over the same newest ``--depth`` versions:

* tokens of our answer (``get_file_trajectory(depth)``) and of ``git log -p -<depth> --follow -- PATH`` in the
  source repository, both estimated at 4 characters a token (the same rule for both: the ratio is what counts);
* changed-symbol recall: for every version, the functions and classes whose lines changed (for Python
  computed independently with ``ast``; for other languages from the tree-sitter spans of
  ``code_trajectory.symbols``), and how many of them our answer names in that version's section;
* the newest change's lines: how many of its added and removed lines our answer shows;
* docstring and comment changes (Python files, found independently with ``ast`` and ``tokenize``): the
  functions, classes and modules whose docstring changed, and how many of them our answer names in that
  version's section (``docstring of `X` changed``, or ``X`` said modified); the comments added or changed, and
  how many of them our answer shows (quoted, ``comment in `X`: `# old` → `# new```, or in a diff it shows).
* whether the newest change's diff is whole (no "diff cut" marker);
* the largest newest change kept whole (issue 23): each history is replayed a second time, ending at its biggest
  change (most added plus removed lines among the replayed commits), so that change is the newest one asked
  about; the table's last line names the largest such change shown whole, and any that was cut.

Usage: python bench/context.py [--depth 10] [--commits 14] [REPO:PATH ...]
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

DEFAULT_CASES = [
    "/work/.mirror/pallets+itsdangerous/repo:src/itsdangerous/serializer.py",
    "/work/.mirror/pallets+itsdangerous/repo:src/itsdangerous/timed.py",
    "/work/.mirror/pallets+itsdangerous/repo:src/itsdangerous/signer.py",
    "/work/.mirror/spf13+pflag/repo:flag.go",
    "/work/.mirror/sindresorhus+got/repo:source/core/options.ts",
]


def git(repo: str, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", f"--git-dir={repo}" if repo.endswith("/repo") or repo.endswith(".git") else "-C",
                           *([] if repo.endswith("/repo") or repo.endswith(".git") else [repo]), *args],
                          capture_output=True, text=True, env=env, check=True, errors="replace").stdout


def history(repo: str, path: str, commits: int) -> list[tuple[str, str]]:
    """``(commit, path at that commit)`` of the last ``commits`` commits touching ``path``, oldest first."""
    out = git(repo, "log", "--follow", "--format=%x00%H", "--name-only", f"-n{commits}", "--", path)
    found = []
    for chunk in out.split("\0")[1:]:
        lines = [line for line in chunk.strip().split("\n") if line]
        if len(lines) >= 2:
            found.append((lines[0], lines[-1]))
    return list(reversed(found))


def python_symbols(text: str) -> dict[str, tuple[int, int]]:
    """Qualified name -> (first line, last line) of every function and class, by the standard library's ``ast``."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    spans: dict[str, tuple[int, int]] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                spans[name] = (start, child.end_lineno or child.lineno)
                walk(child, name + ".")

    walk(tree, "")
    return spans


def other_symbols(path: str, text: str) -> dict[str, tuple[int, int]]:
    from code_trajectory.symbols import language_for

    language = language_for(path)
    if language is None:
        return {}
    return {s.name: (s.start_line, s.end_line) for s in language.extract(text.encode())}


def changed_symbols(path: str, old: str | None, new: str) -> set[str]:
    """The innermost functions/classes containing a changed line (either side), plus added and removed ones."""
    import difflib

    spans = python_symbols if path.endswith(".py") else lambda t: other_symbols(path, t)
    old_spans, new_spans = spans(old or ""), spans(new)
    changed_old, changed_new = set(), set()
    matcher = difflib.SequenceMatcher(a=(old or "").splitlines(), b=new.splitlines(), autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        changed_old.update(range(a1 + 1, a2 + 1))  # a pure insertion changes no old line, a deletion no new one
        changed_new.update(range(b1 + 1, b2 + 1))

    def innermost(spans_: dict[str, tuple[int, int]], lines: set[int]) -> set[str]:
        names = set()
        for line in lines:
            holders = [(e - s, n) for n, (s, e) in spans_.items() if s <= line <= e]
            if holders:
                names.add(min(holders)[1])
        return names

    return (innermost(old_spans, changed_old) | innermost(new_spans, changed_new)
            | (set(new_spans) - set(old_spans)) | (set(old_spans) - set(new_spans)))


def measure(case: str, depth: int, commits: int, *, end_at_biggest: bool = False) -> dict:
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.history import service
    from code_trajectory.recording.session import ProjectSession

    repo, path = case.rsplit(":", 1)
    steps = history(repo, path, commits)
    contents = [(sha, p, git(repo, "show", f"{sha}:{p}")) for sha, p in steps]
    if end_at_biggest:  # the biggest change becomes the newest one
        sizes = [len(_diff_lines(contents[i - 1][2] if i else "", text)) for i, (_, _, text) in enumerate(contents)]
        contents = contents[:max(range(1, len(contents)), key=lambda i: sizes[i]) + 1]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        session = ProjectSession(root, TrajectorySettings.load(root))
        try:
            previous_path = None
            for sha, p, text in contents:
                if previous_path and previous_path != p:
                    (root / previous_path).unlink()
                target = root / p
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
                session.checkpoint(f"replay {sha[:10]}")
                previous_path = p
            answer = service.file_trajectory(session, contents[-1][1], depth)
        finally:
            session.close()
    baseline = git(repo, "log", "-p", f"-{depth}", "--follow", "--", path)
    sections = re.split(r"\n(?=## \d+\. )", answer)[1:]
    shown = contents[-len(sections):]
    previous = {i: contents[i - 1][2] for i in range(1, len(contents))}
    wanted = named = 0
    for (sha, p, text), section, index in zip(shown, sections, range(len(contents) - len(sections), len(contents))):
        names = changed_symbols(p, previous.get(index), text)
        wanted += len(names)
        found = {n for n in names if n.split(".")[-1] in section}
        named += len(found)
        if os.environ.get("CONTEXT_DEBUG") and names - found:
            print(f"  missed in {sha[:10]}: {sorted(names - found)}", file=sys.stderr)
    docs, comments = _docs_and_comments_named(shown, sections, previous, len(contents))
    newest_old = previous.get(len(contents) - 1, "")
    newest_diff = _diff_lines(newest_old, contents[-1][2], signs=True)
    newest_lines = [line[1:] for line in newest_diff if line[1:].strip()]
    last_section = sections[-1] if sections else ""
    shown_lines = sum(1 for line in newest_lines if line in last_section)
    whole = shown_lines == len(newest_lines) and "diff cut" not in last_section
    size = (sum(line[0] == "+" for line in newest_diff), sum(line[0] == "-" for line in newest_diff))
    return {"case": f"{Path(repo).parent.name.replace('+', '/')}:{path}", "ours": len(answer) // 4,
            "git_log_p": len(baseline) // 4, "symbols": (named, wanted), "newest": (shown_lines, len(newest_lines)),
            "docstrings": docs, "comments": comments,
            "newest_size": size, "newest_whole": whole, "newest_commit": contents[-1][0][:10]}


def docstrings(text: str) -> dict[str, str]:
    """Qualified name (``<module>`` for the module) -> docstring of every function, class and the module (``ast``)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    found = {"<module>": ast.get_docstring(tree, clean=False) or ""}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                found[name] = ast.get_docstring(child, clean=False) or ""
                walk(child, name + ".")

    walk(tree, "")
    return found


def comments(text: str) -> list[str]:
    """The text of every ``#`` comment of a Python source, in order (``tokenize``)."""
    import io
    import tokenize

    try:
        return [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return []


def _docs_and_comments_named(shown: list, sections: list[str], previous: dict[int, str],
                             total: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """``((docstrings named, changed), (comments named, changed))`` over the shown versions of a Python file."""
    from collections import Counter

    docs_named = docs_wanted = comments_named = comments_wanted = 0
    for (_, p, text), section, index in zip(shown, sections, range(total - len(sections), total)):
        old = previous.get(index)
        if not p.endswith(".py") or old is None:
            continue
        before, after = docstrings(old), docstrings(text)
        for name in after:
            if name in before and before[name] != after[name]:
                docs_wanted += 1
                short = name.split(".")[-1]
                said = (f"`{name}`" in section and "docstring" in section) or (
                    name == "<module>" and "module docstring" in section) or re.search(
                    rf"modified [^\n]*\b{re.escape(short)}\b", section) is not None
                docs_named += said
        changed = Counter(comments(text)) - Counter(comments(old))
        comments_wanted += sum(changed.values())
        comments_named += sum(n for c, n in changed.items() if c in section)  # quoted, or in a diff shown
    return (docs_named, docs_wanted), (comments_named, comments_wanted)


def _diff_lines(old: str, new: str, *, signs: bool = False) -> list[str]:
    """The added and removed lines from ``old`` to ``new`` (with their ``+``/``-`` when ``signs``)."""
    import difflib

    return [line if signs else line[1:]
            for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def _newest(r: dict) -> str:
    return f"+{r['newest_size'][0]} -{r['newest_size'][1]}, {'whole' if r['newest_whole'] else 'cut'}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("cases", nargs="*", default=DEFAULT_CASES, metavar="REPO:PATH")
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--commits", type=int, default=14)
    args = parser.parse_args()
    print("| file | ours (tokens) | git log -p (tokens) | ratio | changed symbols named | newest change's lines "
          "shown | newest change | docstring changes named | changed comments said |\n|---|---|---|---|---|---|---|---|---|")
    biggest = []
    for case in args.cases:
        if not Path(case.rsplit(":", 1)[0]).exists():
            print(f"| {case} | (repository not found: skipped) | | | | | | | |")
            continue
        r = measure(case, args.depth, args.commits)
        print(f"| {r['case']} | {r['ours']:,} | {r['git_log_p']:,} | {r['git_log_p'] / max(r['ours'], 1):.2f}x fewer "
              f"| {r['symbols'][0]} / {r['symbols'][1]} | {r['newest'][0]} / {r['newest'][1]} | {_newest(r)} "
              f"| {_pair(r['docstrings'])} | {_pair(r['comments'])} |",
              flush=True)
        biggest.append(measure(case, args.depth, args.commits, end_at_biggest=True))
    if biggest:
        print("\nEach history replayed again up to its biggest change, which is then the newest one asked about:\n")
        print("| file | biggest change (commit) | ours (tokens) | its lines shown | whole |\n|---|---|---|---|---|")
        for r in biggest:
            print(f"| {r['case']} | +{r['newest_size'][0]} -{r['newest_size'][1]} ({r['newest_commit']}) | "
                  f"{r['ours']:,} | {r['newest'][0]} / {r['newest'][1]} | {'yes' if r['newest_whole'] else 'no'} |")
        kept = [r for r in biggest if r["newest_whole"]]
        top = max(kept, key=lambda r: sum(r["newest_size"]), default=None)
        print("\nLargest newest change kept whole: " + (f"+{top['newest_size'][0]} -{top['newest_size'][1]} lines "
                                                       f"({top['case']}, {top['ours']:,} tokens)" if top else "none"))
        cut = [r for r in biggest if not r["newest_whole"]]
        if cut:
            print("Newest changes cut: " + "; ".join(f"+{r['newest_size'][0]} -{r['newest_size'][1]} ({r['case']})"
                                                  for r in cut))
    return 0


def _pair(counts: tuple[int, int]) -> str:
    return f"{counts[0]} / {counts[1]}" if counts[1] else "-"


if __name__ == "__main__":
    raise SystemExit(main())
