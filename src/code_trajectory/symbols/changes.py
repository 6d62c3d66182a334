"""Symbol-level change detection between two versions of one file: :func:`compare`.

Matching rules, in order (each symbol is matched at most once):

1. Same qualified name on both sides: unchanged when its text is identical; *modified*
   when its own code (outside child symbols; comments and whitespace ignored; a namespace's
   own import statements included) changed;
   *reformatted* / *comments_changed* when only whitespace / comments of its own text
   changed; otherwise only children changed and they are reported instead (innermost
   reporting: ``modified Serializer.loads``, not also ``Serializer``).
2. Overload aliases: a name that only gained or lost its disambiguation (``Foo.bar`` ->
   ``Foo.bar(int)`` once a second ``bar`` appears) is matched as the same symbol (by text, by
   body, by its one declaration line unchanged, or as the only candidate). Overloads left over
   as many on each side (each one's parameter types changed) are matched by the most similar
   signature.
3. Renames: a removed and an added symbol of the same kind with the same ``body_key``
   (body unchanged, names ignored), or whose text differs only in its name's one word; a JavaScript
   ``A.prototype.m = function`` and the method ``m`` of ``class A`` (or the reverse). Then containers of the same kind sharing at least half
   of their child names (by short name) are renamed too, and their children are matched
   under the new prefix as in rule 1. A child whose rename only follows its container's
   rename is not listed in ``renamed``. Last, the one removed and the one added definition of a kind under one
   parent whose lines are alike (:func:`~.same.renamed_and_changed`) are renamed and changed in one edit, as are
   the one removed and the one added of a kind with one short name anywhere in the file (moved to another class or
   module and changed).
4. What is left is *removed* / *added*; siblings whose relative order changed are *moved*.

The file-level ``kind`` is decided from the whole-file keys (see
:class:`~code_trajectory.symbols.base.FileAnalysis`).

Cost: nothing is hashed up front. Symbols and stretches of text are compared by their raw
bytes first; only what differs is normalised (see the comparison helpers of
:mod:`.normalize`), with the answers full keys would give. :func:`compare` parses the new
version incrementally from the old one's tree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from . import same
from .base import FileAnalysis, Symbol, short_name
from .comments import CommentEdit, comment_edits, describe_comments, doc_reformatted, only_docs_differ, top_exact
from .constants import capped, constant_changes, constant_parts
from .fields import field_changes, field_parts
from .lookup import readable, renamed_said
from .pairing import NUMBERED, base_name, moved_siblings, pair, pair_repeated, pair_signatures
from .registry import language_for
from .same import own_respaced, same_body, same_imports, same_own, same_own_imports, same_top, same_top_text
from .same import same_comments as same_comments_everywhere

#: Values of :attr:`SymbolChanges.kind`.
CHANGE_KINDS = ("unchanged", "added", "deleted", "whitespace-only", "comment-only", "doc-only", "import-only",
                "code", "skipped")



@dataclass(frozen=True, slots=True)
class SymbolChanges:
    """What changed in one file between two versions, by qualified symbol name.

    Every name list is in source order (the new version's for names that exist there, else
    the old one's).

    Attributes:
        path: the file's path relative to the project root, as given.
        language: the language module's name.
        kind: one of :data:`CHANGE_KINDS`: ``added``/``deleted`` (one side is absent),
            ``unchanged`` (identical bytes), ``whitespace-only`` (same tokens and comments),
            ``comment-only`` (same code, comments differ), ``doc-only`` (same code, a docstring or doc
            comment differs, other comments may too; with imports changed too it is ``code``), ``import-only``
            (only import statements differ in code), ``code``, or ``skipped`` (see ``skipped``).
        added, removed: every symbol only in the new / old version (children of an added
            class included; :meth:`summary` folds them into their parent).
        modified: symbols whose own code changed (innermost, see module docstring).
        renamed: ``(old, new)`` pairs with an unchanged body.
        aliases: ``(old, new)`` names of one symbol whose name changed because another definition of the name came
            or went, not by an edit of its own (``Foo.bar`` became ``Foo.bar(String)`` when ``bar(int)`` was added;
            ``init@2`` became ``init``): a history follows them. Not a change in itself.
        reformatted: symbols whose own text changed in whitespace only.
        comments_changed: symbols whose own comments changed (code unchanged; docstrings and doc comments
            are in ``docs_changed``).
        docs_changed: symbols whose docstring (Python) or doc comment (``/** */``, ``///``, see
            :mod:`.comments`) changed, their code unchanged.
        module_doc_changed: the module's docstring changed.
        comment_edits: every comment, docstring and doc comment that changed, with its text (see
            :class:`~code_trajectory.symbols.comments.CommentEdit`); empty when no comment changed.
        moved: symbols whose order among their siblings changed.
        imports_changed: import statements at file/namespace level differ.
        top_level_changed: code outside every symbol (imports excluded) differs, besides the ``constants``.
        constants: ``(name, "changed" | "added" | "removed")``: the changed constants (:mod:`.constants`).
        fields: ``(symbol, ((field, "changed" | "added" | "removed"), ...))``: the fields that changed in each
            modified class-like symbol that has some (:mod:`.fields`), in the order of ``modified``.
        skipped: ``"binary"`` or ``"too-large"`` when either version was not analysed (then
            every list is empty), else ``None``.
        has_errors: the new version (or the old one when deleted) has syntax errors; the
            result holds what tree-sitter could still recognise.
    """

    path: str
    language: str
    kind: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    reformatted: tuple[str, ...] = ()
    comments_changed: tuple[str, ...] = ()
    docs_changed: tuple[str, ...] = ()
    module_doc_changed: bool = False
    comment_edits: tuple[CommentEdit, ...] = ()
    moved: tuple[str, ...] = ()
    imports_changed: bool = False
    top_level_changed: bool = False
    constants: tuple[tuple[str, str], ...] = ()
    fields: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    skipped: str | None = None
    has_errors: bool = False
    parents: dict[str, str | None] = field(default_factory=dict, repr=False, compare=False)

    def ancestors(self, name: str) -> Iterator[str]:
        """The symbols ``name`` is nested in, innermost first (the chain of :attr:`parents`; a cycle, which no parser
        makes, ends it)."""
        seen = {name}
        parent = self.parents.get(name)
        while parent is not None and parent not in seen:
            yield parent
            seen.add(parent)
            parent = self.parents.get(parent)

    @property
    def touched(self) -> tuple[str, ...]:
        """Every name that changed meaningfully: added, removed, modified, and the new names of renames."""
        return self.added + self.removed + self.modified + tuple(new for _, new in self.renamed)

    def modified_said(self, name: str, said: str, *, lean: bool = False) -> str:
        """A modified symbol as a list says it (``said``), with the fields that changed in it: ``Config (field
        `timeout` changed)``; ``lean``: see :func:`~.fields.field_parts`."""
        fields = next((f for n, f in self.fields if n == name), ())
        return f"{said} ({field_parts(fields, lean=lean)})" if fields else said

    @property
    def said_otherwise(self) -> frozenset[str]:
        """The names whose comment changes go unsaid, their change being said otherwise: the symbols added, removed
        or modified and the constants changed, added or removed (``TIMEOUT = 5  # seconds`` removed is said once)."""
        return frozenset(self.added + self.removed + self.modified + tuple(name for name, _ in self.constants))

    def comment_parts(self) -> list[str]:
        """Docstring, doc-comment and comment changes in words (``docstring of `echo` changed``, a short comment
        quoted: ``comment in `foo`: `# old` → `# new```), leaving out :attr:`said_otherwise`; see
        :func:`~.comments.describe_comments`."""
        return describe_comments(self.comment_edits, self.language, self.comments_changed, self.said_otherwise)

    def summary(self) -> str:
        """Return a one-line description, e.g. ``modified Serializer.loads; added Serializer.iter_unsigners``.

        Children of an added (removed) symbol are folded into it; each list names :data:`~.constants.NAMES_LISTED`
        at most, then ``and N more``. Empty lists are left out; a change touching no symbol is said by ``kind``.
        """
        parts = []

        def fold(names: tuple[str, ...]) -> list[str]:
            keep = set(names)
            return [n for n in names if self.parents.get(n) not in keep]

        for label, names in (("modified", [self.modified_said(n, readable(n)) for n in self.modified]),
                             ("added", [readable(n) for n in fold(self.added)]),
                             ("removed", [readable(n) for n in fold(self.removed)]),
                             ("renamed", [renamed_said(a, b) for a, b in self.renamed]),
                             ("moved", [readable(n) for n in self.moved]),
                             ("reformatted", [readable(n) for n in self.reformatted])):
            if names:  # each group capped: 39 modified crowded out the one added (click replay)
                parts.append(f"{label} {capped(names)}")
        parts += constant_parts(self.constants)
        parts += self.comment_parts()
        if self.imports_changed and self.kind not in ("added", "deleted"):
            parts.append("imports changed")
        if self.top_level_changed and self.kind not in ("added", "deleted"):
            parts.append("top-level code changed")
        if not parts or self.kind in ("skipped", "whitespace-only", "comment-only", "import-only"):
            parts.insert(0, self.kind if self.skipped is None else f"skipped ({self.skipped})")
        return "; ".join(parts)


def compare(path: str, old: bytes | None, new: bytes | None) -> SymbolChanges | None:
    """Compare two versions of one file symbol by symbol.

    Args:
        path: the file's path relative to the project root; its extension picks the language.
        old: the previous content, or ``None`` when the file is added.
        new: the current content, or ``None`` when the file is deleted.

    Returns:
        A :class:`SymbolChanges`, or ``None`` when no language module handles ``path`` (the
        caller then falls back to git's funcname hunk headers). Binary or too-large content
        gives ``kind="skipped"`` with empty lists.

    Raises:
        TrajectoryError: the language's grammar package cannot be loaded.
    """
    language = language_for(path)
    if language is None:
        return None
    before = None if old is None else language.analyze(old)
    after = None if new is None else language.analyze(new, previous=before)  # incremental reparse
    return compare_analyses(path, before, after)


def compare_analyses(path: str, old: FileAnalysis | None, new: FileAnalysis | None) -> SymbolChanges:
    """Compare two :class:`~code_trajectory.symbols.base.FileAnalysis` of one file (``None`` = absent).

    Used by :func:`compare` and by the blob cache; arguments and result as in :func:`compare`.
    """
    ref = new if new is not None else old
    if ref is None:
        return SymbolChanges(path, "", "unchanged")
    skipped = next((a.skipped for a in (old, new) if a is not None and a.skipped), None)
    if skipped:
        return SymbolChanges(path, ref.language, "skipped", skipped=skipped)
    parents = {s.name: s.parent for a in (old, new) if a is not None for s in a.symbols}
    if old is None or new is None:
        names = tuple(s.name for s in ref.symbols)
        kind = "added" if old is None else "deleted"
        return SymbolChanges(path, ref.language, kind, added=names if old is None else (),
                             removed=names if new is None else (), has_errors=ref.has_errors,
                             imports_changed=True, top_level_changed=True, parents=parents)
    if old.source == new.source:
        return SymbolChanges(path, ref.language, "unchanged", has_errors=new.has_errors, parents=parents)
    return _diff(path, old, new, parents)


def _diff(path: str, old: FileAnalysis, new: FileAnalysis, parents: dict[str, str | None]) -> SymbolChanges:
    old_by = {s.name: s for s in old.symbols}
    new_by = {s.name: s for s in new.symbols}
    pairs: dict[str, str] = {n: n for n in old_by if n in new_by}  # old name -> new name, same symbol
    renamed: dict[str, str] = {}
    removed = [s for s in old.symbols if s.name not in new_by]
    added = [s for s in new.symbols if s.name not in old_by]

    if any(NUMBERED.search(s.name) for s in (*old.symbols, *new.symbols)):
        pair_repeated(old.symbols, new.symbols, pairs, removed, added)

    # 2. overload aliases
    by_base: dict[str, list[Symbol]] = {}
    for s in added:
        by_base.setdefault(base_name(s.name), []).append(s)
    for r in list(removed):
        cands = by_base.get(base_name(r.name), [])
        pick = next((a for a in cands if r._keys.same_text(r._index, a._keys, a._index)), None) or next(
            (a for a in cands if a.body_key == r.body_key), None) or same.one_same_header(r, cands)
        if pick is None and len(cands) == 1 and len([x for x in removed if base_name(x.name) == base_name(r.name)]) == 1:
            pick = cands[0]
        if pick is not None and pick in added:
            cands.remove(pick)
            pair(r, pick, pairs, removed, added)
    pair_signatures(removed, added, pairs)

    # 3a. renames with an unchanged body (or a pure rename whose body names its old name too: a delegation; a JS
    # method moved from its prototype into its class)
    for r in list(removed):
        cands = [a for a in added if a.kind == r.kind and a.body_key == r.body_key] or [
            a for a in added if a.kind == r.kind and same.renamed_only(r, a)] or same.class_form(r, added)
        if cands:
            a = next((c for c in cands if c.parent == pairs.get(r.parent or "", r.parent)), cands[0])
            renamed[r.name] = a.name
            pair(r, a, pairs, removed, added)
    # 3b. containers renamed with changed children
    old_kids = _children(old.symbols) if removed and added else {}
    new_kids = _children(new.symbols) if old_kids else {}
    for r in list(removed):
        mine = old_kids.get(r.name)
        if not mine:
            continue
        for a in added:
            theirs = new_kids.get(a.name)
            if a.kind == r.kind and theirs and len(mine & theirs) * 2 >= len(mine | theirs):
                renamed[r.name] = a.name
                pair(r, a, pairs, removed, added)
                break
    # 3c. children following their container's rename
    added_by = {s.name: s for s in added}
    for r in list(removed):
        parent = r.parent
        if parent is None:
            continue
        new_parent = pairs.get(parent)
        if new_parent is None or new_parent == parent or not r.name.startswith(parent):
            continue
        target = added_by.get(new_parent + r.name[len(parent):])
        if target is not None and target in added:
            pair(r, target, pairs, removed, added)
    # 3d. a rename with a changed body: the one removed and the one added of a kind under one parent, alike
    for r in list(removed):
        parent = pairs.get(r.parent or "", r.parent)
        olds = [x for x in removed if x.kind == r.kind and pairs.get(x.parent or "", x.parent) == parent]
        news = [a for a in added if a.kind == r.kind and a.parent == parent]
        if len(olds) == 1 and len(news) == 1 and same.renamed_and_changed(r, news[0]):
            renamed[r.name] = news[0].name
            pair(r, news[0], pairs, removed, added)
    # 3e. moved to another class or module of the file and changed: the one removed and the one added of a kind
    # with its short name, alike (rack's Request#ip into Request::Helpers, its @env[...] made get_header(...))
    def alone(symbols: list[Symbol]) -> dict[tuple[str, str], Symbol]:
        count: dict[tuple[str, str], list[Symbol]] = {}
        for s in symbols:
            count.setdefault((s.kind, short_name(s.name)), []).append(s)
        return {key: found[0] for key, found in count.items() if len(found) == 1}

    lone_new = alone(added) if removed and added else {}
    for key, r in alone(removed).items() if lone_new else ():
        there = lone_new.get(key)
        if there is not None and there in added and same.renamed_and_changed(r, there):
            renamed[r.name] = there.name
            pair(r, there, pairs, removed, added)
    for old_name, new_name in list(renamed.items()):
        op, np_ = old_by[old_name].parent, new_by[new_name].parent
        if op is not None and pairs.get(op) == np_ and op != np_ and \
                old_name[len(op):] == new_name[len(np_ or ""):]:
            del renamed[old_name]

    modified, reformatted, comments, respaced = [], [], [], []
    fields = []
    reverse = {v: k for k, v in pairs.items()}
    old_order = _child_lists(old.symbols)
    new_order = _child_lists(new.symbols)
    moved = moved_siblings(old, new, pairs)
    reordered = {new_by[n].parent for n in moved}  # a member moved with its doc comment: its container's order
    for s in new.symbols:
        o = old_by.get(reverse.get(s.name, ""))
        if o is None or o._keys.same_text(o._index, s._keys, s._index) or o.name != s.name and \
                same.renamed_only(o, s):
            continue
        same_code, same_comments = same_own(o._keys, o._index, s._keys, s._index)
        if same_code and s._keys.namespaces[s._index] and not same_own_imports(o._keys, o._index, s._keys, s._index):
            same_code = False  # a namespace's own imports are left out of its keys: a changed `use` is code
        if not same_code or (_same_children(o, s, old_order, new_order, pairs) and not _same_body(o, s)):
            modified.append(s.name)
            if found := field_changes(o, s, new.language):
                fields.append((s.name, found))
        elif not same_comments:
            if s.name not in reordered or not same.same_own_comments_in_any_order(o._keys, o._index, s._keys,
                                                                                 s._index):
                comments.append(s.name)
        elif o.name == s.name and own_respaced(o._keys, o._index, s._keys, s._index):
            # (a rename alone alters the exact text); spaces inside a comment's text are no reformatting of the
            # symbol, but may realign a member's doc comment, which lies in its text
            respaced.append(s.name)
            if own_respaced(o._keys, o._index, s._keys, s._index, layout=True):
                reformatted.append(s.name)
    # a member's doc comment lies in its container's own text: realigned, it is the member's (git log -L lists it)
    containers: list[str | None] = [*modified, *comments, *respaced,
                                    *([None] if top_exact(old) != top_exact(new) else [])]
    if containers:
        docs_realigned = doc_reformatted(old_by, new.symbols, reverse, containers, {*modified, *comments})
        if docs_realigned:
            reformatted = [n for n in reformatted if not only_docs_differ(old_by[reverse[n]], new_by[n], docs_realigned,
                                                                   old_by, new_by, reverse)]
            reformatted = [s.name for s in new.symbols if s.name in {*reformatted, *docs_realigned}]

    # the file-level keys, compared lazily: code_key = (top_key, imports_key, structure)
    ok, nk = old._keys, new._keys
    same_top_code = same_top(ok, nk)
    imports_equal = same_imports(ok, nk)
    structure_equal = same_top_code and _same_structure(old, new)
    if imports_equal and structure_equal:
        comments_equal = same_comments_everywhere(ok, nk)
        kind = "whitespace-only" if comments_equal else "comment-only"
    else:
        comments_equal = not comments and same_comments_everywhere(ok, nk)
        kind = "import-only" if structure_equal else "code"
    edits = () if comments_equal else comment_edits(old, new, pairs)
    top_changed = not same_top_code and not same_top_text(ok, nk, {s._index for s in removed if s.parent is None},
                                                          {s._index for s in added if s.parent is None})
    constants, rest_changed = constant_changes(old, new) if top_changed else ((), True)
    top_changed = top_changed and (rest_changed or not constants)  # other code outside symbols changed too
    docs: tuple[str, ...] = ()
    module_doc = False
    if edits:
        said = {*modified, *(s.name for s in added), *(s.name for s in removed)}
        docs = tuple(dict.fromkeys(e.symbol for e in edits if e.doc and e.symbol is not None and e.symbol not in said))
        module_doc = any(e.doc and e.symbol is None for e in edits)
        explained = set()
        for e in edits:
            name = e.symbol
            while name is not None and name not in explained:
                explained.add(name)
                name = parents.get(name)
        comments = list(dict.fromkeys([*(e.symbol for e in edits if not e.doc and e.symbol is not None
                                          and e.symbol not in said),
                                       *(n for n in comments if n not in explained)]))
        if docs or module_doc:  # a docstring is code (a CLI's --help): never a one-line cosmetic change
            kind = {"comment-only": "doc-only", "import-only": "code"}.get(kind, kind)
    return SymbolChanges(
        path, new.language, kind,
        added=tuple(s.name for s in added), removed=tuple(s.name for s in removed),
        modified=tuple(modified), renamed=tuple(renamed.items()),
        aliases=tuple((o, n) for o, n in pairs.items() if o != n and o not in renamed), reformatted=tuple(reformatted),
        comments_changed=tuple(comments), docs_changed=docs, module_doc_changed=module_doc, comment_edits=edits,
        moved=moved,
        imports_changed=not imports_equal, top_level_changed=top_changed, constants=constants,
        fields=tuple(fields), has_errors=new.has_errors, parents=parents)


def _children(symbols: tuple[Symbol, ...]) -> dict[str, set[str]]:
    kids: dict[str, set[str]] = {}
    for s in symbols:
        if s.parent is not None:
            kids.setdefault(s.parent, set()).add(short_name(s.name))
    return kids


def _same_body(a: Symbol, b: Symbol) -> bool:
    """``a.body_key == b.body_key``, hashing only what differs."""
    return same_body(a._keys, a._index, b._keys, b._index)


def _same_structure(old: FileAnalysis, new: FileAnalysis) -> bool:
    """The names and kinds of every symbol, and the bodies of the file-level ones, are equal
    (``code_key`` without ``top_key`` and ``imports_key``)."""
    if len(old.symbols) != len(new.symbols):
        return False
    if any(a.name != b.name or a.kind != b.kind or (a.parent is None) != (b.parent is None)
           for a, b in zip(old.symbols, new.symbols)):
        return False
    return all(_same_body(a, b) for a, b in zip(old.symbols, new.symbols) if a.parent is None)


def _child_lists(symbols: tuple[Symbol, ...]) -> dict[str, list[Symbol]]:
    kids: dict[str, list[Symbol]] = {}
    for s in symbols:
        if s.parent is not None:
            kids.setdefault(s.parent, []).append(s)
    return kids


def _same_children(o: Symbol, s: Symbol, old_order: dict[str, list[Symbol]], new_order: dict[str, list[Symbol]],
                   pairs: dict[str, str]) -> bool:
    """The same children, in the same order, with the same bodies: a body change is then the symbol's own
    (its code moved across children, e.g. a class attribute moved below a method)."""
    old_kids = old_order.get(o.name, [])
    new_kids = new_order.get(s.name, [])
    return len(old_kids) == len(new_kids) and all(
        pairs.get(a.name) == b.name and _same_body(a, b) for a, b in zip(old_kids, new_kids))
