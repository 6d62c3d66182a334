"""Golden results: ``compare`` and ``extract`` on ~450 generated edits across the 11 languages.

The expected results in ``golden_compare.json`` were produced by the first, eager
implementation of the package (every key hashed at analysis time, commit ``ef70917``), and
regenerated once when docstrings and doc comments became changes of their symbols
(``doc-only``, ``docs_changed``, short comments quoted in the summary, ``@N`` read as ordinals), and again
when a name's repeated definitions came to be paired by body before position (3 Python cases of a duplicated
``def`` line changed: a deleted first ``init`` of two was reported as the second one removed), and again when a
pure rename whose body names its old name came to be a rename (1 Ruby case: ``def size; @items.size; end`` renamed
``sizeX`` was a removal and an addition), and again when C# generic types came to be named by their arity
(``Store0<>``, ``Store0<>.Load``: names only, every other field the same), and again when overloads whose
signatures all changed at once came to be paired (1 Java and 1 C# case: a type parameter ``T`` renamed in both
``save`` overloads was both removed and added), and again when a changed module-level assignment came to be
named as a constant (5 Python cases: ``constant `DEFAULT` added``, no longer "top-level code changed" when nothing
else there changed), and the C++ results once more, recomputed in place with their operations kept, when C++
functions returning a reference became symbols (``const T& load(...)`` was left out: 42 cases now name
``app::StoreN::load`` where they named its class or nothing), and again, recomputed in place, when a rename with a
changed body came to be a rename (4 cases, Python, PHP, C#, Rust: the one removed and the one added method of a class,
renamed and changed in one edit, were removed and added), and again, recomputed in place, when a modified class came
to name its changed fields (summaries only, in Python, JavaScript, TypeScript, Java and C# cases: ``modified
Store.Store2 (field `dir` changed)``, ``(field `items` changed; other code too)`` when its type parameter was
renamed too; every other field the same), and again, recomputed in place, when the whitespace a member brings or takes
stopped reformatting its container (6 cases, Python, TypeScript, Java, Ruby and C#: a nested function, class or
namespace member deleted, both ways, reported its container ``reformatted`` though none of its own lines changed), and
again, recomputed in place, when a top-level constant of Go, JavaScript, TypeScript, Rust and Ruby came to be named as
Python's are (20 cases, both ways: ``constant `DEFAULT` added``, no longer "top-level code changed" when nothing else
there changed; every other field the same), and again, recomputed in place, when a docstring or doc comment added or
removed came to be said so (14 cases, Rust, Java, C++, C# and PHP, both ways: ``doc comment of `Store1` removed``
where a ``/**`` made a plain ``/*`` had read "changed"; summaries only, every other field the same), and again,
recomputed in place, when each list of a summary came to name 10 symbols at most (29 cases in all 11 languages, both
ways: ``reformatted Store0, ..., Store1.load and 8 more``; 52 reformatted, 4 modified and 3 renamed lists cut, the
summaries otherwise the same, every other field the same), and again, recomputed in place, when each name of a
rename came to be said by itself (2 cases, Python and C++, both ways: ``make_store0.check -> 2nd definition of
make_store1.check``, which read ``2nd definition of make_store0.check -> make_store1.check``, and the other way
``make_store1.check@2 -> ...`` with its suffix; summaries only, every other field the same).
They pin the observable semantics (innermost reporting, renames, moves, reformatted,
comments-only, import-only, overload naming, line spans) so that a faster implementation
can be checked against them edit by edit.

Each case is a base source (stored in the JSON) and a short list of edit operations
(delete, duplicate, re-indent or re-space a line, change a digit, a comment or a string,
rename a word or a symbol, move or delete a symbol, insert an import or top-level code,
CRLF). :func:`apply` is deterministic, so the JSON only stores the operations.

After an intended change of semantics, recompute the expected results in place (each case's base and edits kept;
the changed cases are listed, to be read one by one)::

    python tests/symbols/test_symbols_golden.py --recompute

``--write`` draws the cases anew from ``bench/symbols.py`` (a new base or new kinds of edit).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from pathlib import Path

import pytest

from code_trajectory.symbols import compare, language_for

GOLDEN = Path(__file__).with_name("golden_compare.json")

_COMMENT = re.compile(r'(#|//|/\*|"""|--)')
_STRING = re.compile(r'"[^"\n]*"')
_DIGIT = re.compile(r"\d")


def apply(source: str, ops: list[list]) -> str:
    """Apply edit operations to ``source`` in order (each is ``[name, *params]``)."""
    for op in ops:
        name, *p = op
        lines = source.split("\n")
        if name == "crlf":
            source = source.replace("\n", "\r\n")
            continue
        if name == "rename_word":
            source = re.sub(rf"\b{re.escape(p[0])}\b", p[1], source)
            continue
        if name == "move":  # lines [a, b) before line c (0-based)
            a, b, c = p
            block = lines[a:b]
            rest = lines[:a] + lines[b:]
            c = c if c <= a else c - (b - a)
            lines = rest[:c] + block + rest[c:]
        elif name == "delete_range":
            del lines[p[0]:p[1]]
        elif name == "insert":
            lines.insert(p[0], p[1])
        else:
            i = p[0] % len(lines)
            line = lines[i]
            if name == "delete_line":
                del lines[i]
            elif name == "dup_line":
                lines.insert(i, line)
            elif name == "trailing_ws":
                lines[i] = line + "  "
            elif name == "indent":
                lines[i] = " " + line
            elif name == "space":
                stripped = line.lstrip()
                j = len(line) - len(stripped)
                lines[i] = line[:j] + stripped.replace(" ", "  ", 1)
            elif name == "digit":
                lines[i] = _DIGIT.sub(lambda m: str((int(m.group()) + 1) % 10), line, count=1)
            elif name == "comment":
                lines[i] = _COMMENT.sub(lambda m: m.group() + " EDITED", line, count=1)
            elif name == "string":
                lines[i] = _STRING.sub(lambda m: m.group()[:1] + " " + m.group()[1:], line, count=1)
            elif name == "word":  # rename the first occurrence of a word in this line
                lines[i] = re.sub(rf"\b{re.escape(p[1])}\b", p[2], line, count=1)
            else:
                raise ValueError(name)
        source = "\n".join(lines)
    return source


def describe(changes) -> dict:
    """The observable fields of a :class:`SymbolChanges`."""
    if changes is None:
        return {}
    return {
        "kind": changes.kind, "added": list(changes.added), "removed": list(changes.removed),
        "modified": list(changes.modified), "renamed": [list(r) for r in changes.renamed],
        "reformatted": list(changes.reformatted), "comments_changed": list(changes.comments_changed),
        "docs_changed": list(changes.docs_changed),
        "moved": list(changes.moved), "imports_changed": changes.imports_changed,
        "top_level_changed": changes.top_level_changed, "skipped": changes.skipped,
        "has_errors": changes.has_errors,
        "summary": hashlib.sha1(changes.summary().encode()).hexdigest()[:12],
    }


def symbols_digest(path: str, source: bytes) -> str:
    symbols = language_for(path).extract(source)
    text = repr([(s.name, s.kind, s.start_line, s.end_line, s.parent) for s in symbols])
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _load() -> dict:
    return json.loads(GOLDEN.read_text())


_DATA = _load() if GOLDEN.exists() else {"bases": {}, "cases": []}


def test_golden_file_covers_every_language():
    assert len(_DATA["bases"]) == 11
    assert len(_DATA["cases"]) >= 400


@pytest.mark.parametrize("lang", sorted(_DATA["bases"]))
def test_base_extraction_matches_golden(lang):
    base = _DATA["bases"][lang]
    symbols = language_for(base["path"]).extract(base["source"].encode())
    assert [[s.name, s.kind, s.start_line, s.end_line, s.parent] for s in symbols] == base["symbols"]


@pytest.mark.parametrize("lang", sorted(_DATA["bases"]))
def test_edits_compare_like_golden(lang):
    base = _DATA["bases"][lang]
    path, old = base["path"], base["source"]
    failures = []
    for case in _DATA["cases"]:
        if case["lang"] != lang:
            continue
        new = apply(old, case["ops"])
        got = describe(compare(path, old.encode(), new.encode()))
        back = describe(compare(path, new.encode(), old.encode()))
        digest = symbols_digest(path, new.encode())
        if got != case["forward"] or back != case["backward"] or digest != case["symbols"]:
            failures.append((case["ops"], case["forward"], got, case["backward"], back, case["symbols"], digest))
    assert not failures, "\n\n".join(
        f"ops={f[0]}\nexpected forward={f[1]}\n     got forward={f[2]}\nexpected backward={f[3]}\n"
        f"     got backward={f[4]}\nsymbols {f[5]} / {f[6]}" for f in failures[:5])


@pytest.mark.parametrize("lang", sorted(_DATA["bases"]))
def test_incremental_reparse_gives_the_same_tree_as_a_fresh_parse(lang):
    base = _DATA["bases"][lang]
    language = language_for(base["path"])
    old = base["source"].encode()
    for case in _DATA["cases"]:
        if case["lang"] != lang:
            continue
        new = apply(base["source"], case["ops"]).encode()
        for a, b in ((old, new), (new, old)):
            incremental = language.analyze(b, previous=language.analyze(a))
            fresh = language.analyze(b)
            assert str(incremental._keys.tree.root_node) == str(fresh._keys.tree.root_node), case["ops"]
            assert incremental.symbols == fresh.symbols and incremental.has_errors == fresh.has_errors


@pytest.mark.parametrize("lang", sorted(_DATA["bases"]))
def test_lazy_comparisons_agree_with_the_full_keys(lang):
    """Every shortcut of the comparison (raw bytes first, only differing chunks normalised)
    answers what comparing the hashed keys answers."""
    from code_trajectory.symbols.same import same_body, same_comments, same_imports, same_own, same_top

    base = _DATA["bases"][lang]
    language = language_for(base["path"])
    old_source = base["source"].encode()
    checked = 0
    for case in _DATA["cases"]:
        if case["lang"] != lang:
            continue
        new_source = apply(base["source"], case["ops"]).encode()
        # lazily compared pair, and an independent pair whose keys are all hashed
        old, new = language.analyze(old_source), language.analyze(new_source)
        full_old, full_new = language.analyze(old_source), language.analyze(new_source)
        ok, nk = old._keys, new._keys
        assert same_top(ok, nk) == (full_old.top_key == full_new.top_key), case["ops"]
        assert same_imports(ok, nk) == (full_old.imports_key == full_new.imports_key), case["ops"]
        assert same_comments(ok, nk) == (full_old.comments_key == full_new.comments_key), case["ops"]
        full_by = {s.name: s for s in full_new.symbols}
        new_by = {s.name: s for s in new.symbols}
        for o, fo in zip(old.symbols, full_old.symbols):
            s, fs = new_by.get(o.name), full_by.get(o.name)
            if s is None:
                continue
            code, comments = same_own(ok, o._index, nk, s._index)
            assert code == (fo.own_key == fs.own_key), (case["ops"], o.name)
            assert comments == (fo.own_comments == fs.own_comments), (case["ops"], o.name)
            assert same_body(ok, o._index, nk, s._index) == (fo.body_key == fs.body_key), (case["ops"], o.name)
            checked += 1
    assert checked > 100


# ---------------------------------------------------------------------------------------- generation

def _cases_for(lang: str, path: str, source: str, rng: random.Random, count: int) -> list[list[list]]:
    symbols = language_for(path).extract(source.encode())
    lines = source.split("\n")
    n = len(lines)
    words = sorted({w for s in symbols for w in re.findall(r"[A-Za-z_]\w*", s.name.rsplit(".", 1)[-1])
                    if len(w) > 2})
    imports = {"python": "import sys", "javascript": 'import x from "x";', "typescript": 'import * as y from "y";',
               "go": 'import "strings"', "rust": "use std::io;", "java": "import java.util.List;",
               "c": "#include <string.h>", "cpp": "#include <vector>", "ruby": 'require "set"',
               "csharp": "using System.Linq;", "php": "use App\\Other;"}
    top = {"python": "DEFAULT = make_store0('.')", "javascript": "const DEFAULT = 3;",
           "typescript": "const DEFAULT: number = 3;", "go": "var Default = 3", "rust": "const DEFAULT: u8 = 3;",
           "java": "", "c": "int default_limit = 3;", "cpp": "int default_limit = 3;", "ruby": "DEFAULT = 3",
           "csharp": "", "php": "$default = 3;"}

    def one() -> list:
        kind = rng.choice(["delete_line", "dup_line", "trailing_ws", "indent", "space", "digit", "comment",
                           "string", "word", "rename_word", "rename_symbol", "move", "delete_symbol",
                           "import", "top", "blank", "crlf"])
        i = rng.randrange(n)
        if kind in ("delete_line", "dup_line", "trailing_ws", "indent", "space", "digit"):
            return [kind, i]
        if kind == "comment":
            cands = [j for j, line in enumerate(lines) if _COMMENT.search(line)]
            return ["comment", rng.choice(cands) if cands else i]
        if kind == "string":
            cands = [j for j, line in enumerate(lines) if _STRING.search(line)]
            return ["string", rng.choice(cands) if cands else i]
        if kind == "word":
            w = rng.choice(words)
            cands = [j for j, line in enumerate(lines) if re.search(rf"\b{w}\b", line)]
            return ["word", rng.choice(cands) if cands else i, w, w + "X"]
        if kind == "rename_word":
            w = rng.choice(words)
            return ["rename_word", w, w + "Y"]
        if kind == "rename_symbol":
            s = rng.choice(symbols)
            w = re.findall(r"[A-Za-z_]\w*", s.name)[-1]
            return ["rename_word", w, "renamed_" + w]
        if kind == "move":
            s = rng.choice(symbols)
            siblings = [t for t in symbols if t.parent == s.parent and t is not s]
            if not siblings:
                return ["dup_line", i]
            t = rng.choice(siblings)
            return ["move", s.start_line - 1, s.end_line, t.start_line - 1]
        if kind == "delete_symbol":
            s = rng.choice(symbols)
            return ["delete_range", s.start_line - 1, s.end_line]
        if kind == "import":
            return ["insert", 1 if lang != "php" else 2, imports[lang]]
        if kind == "top":
            return ["insert", n - 1, top[lang]] if top[lang] else ["blank_line", i]
        if kind == "blank":
            return ["insert", i, ""]
        return ["crlf"]

    out = []
    for _ in range(count):
        ops = [one() for _ in range(rng.choice([1, 1, 1, 2, 3]))]
        ops = [op if op[0] != "blank_line" else ["insert", op[1], ""] for op in ops]
        out.append(ops)
    return out


def write() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from symbols import build  # bench/symbols.py

    rng = random.Random(20240611)
    data: dict = {"bases": {}, "cases": []}
    for lang in ("python", "javascript", "typescript", "go", "rust", "java", "c", "cpp", "ruby", "csharp", "php"):
        path, source_bytes = build(lang, 90)
        source = source_bytes.decode()
        symbols = language_for(path).extract(source_bytes)
        data["bases"][lang] = {"path": path, "source": source,
                               "symbols": [[s.name, s.kind, s.start_line, s.end_line, s.parent] for s in symbols]}
        for ops in _cases_for(lang, path, source, rng, 42):
            new = apply(source, ops)
            data["cases"].append({
                "lang": lang, "ops": ops,
                "forward": describe(compare(path, source_bytes, new.encode())),
                "backward": describe(compare(path, new.encode(), source_bytes)),
                "symbols": symbols_digest(path, new.encode()),
            })
    _dump(data)
    print(f"wrote {len(data['cases'])} cases to {GOLDEN}")


def recompute() -> None:
    """The expected results of every stored case recomputed with today's code, each case's base and edits kept (what
    an intended change of semantics needs; :func:`write` draws the cases anew); prints which cases changed."""
    data = json.loads(GOLDEN.read_text())
    changed = []
    for base in data["bases"].values():
        base["symbols"] = [[s.name, s.kind, s.start_line, s.end_line, s.parent]
                           for s in language_for(base["path"]).extract(base["source"].encode())]
    for n, case in enumerate(data["cases"]):
        base = data["bases"][case["lang"]]
        old, new = base["source"].encode(), apply(base["source"], case["ops"]).encode()
        fresh = {"forward": describe(compare(base["path"], old, new)),
                 "backward": describe(compare(base["path"], new, old)),
                 "symbols": symbols_digest(base["path"], new)}
        if any(case[key] != value for key, value in fresh.items()):
            changed.append(f"{n} ({case['lang']}): " + ", ".join(k for k, v in fresh.items() if case[k] != v))
            case.update(fresh)
    _dump(data)
    print(f"recomputed {len(data['cases'])} cases in {GOLDEN}; {len(changed)} changed", *changed, sep="\n")


def _dump(data: dict) -> None:
    cases = ",\n".join(json.dumps(c, sort_keys=True, separators=(",", ":")) for c in data["cases"])
    GOLDEN.write_text('{"bases": ' + json.dumps(data["bases"], indent=1, sort_keys=True)
                      + ',\n"cases": [\n' + cases + "\n]}\n")


if __name__ == "__main__":
    if "--write" in sys.argv:
        write()
    elif "--recompute" in sys.argv:
        recompute()
