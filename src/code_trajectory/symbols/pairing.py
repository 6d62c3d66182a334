"""Pairing the symbols of two versions of a file whose names changed without a rename: rules 1b and 2b of
:mod:`.changes` (repeated definitions renumbered, overloads whose signatures all changed), and the base name that
rule 2 pairs overload aliases by; last, the siblings whose order the pairs changed (rule 4's *moved*)."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from .base import FileAnalysis, Symbol
from .same import NAME_SUFFIX

#: The occurrence suffix of a name defined several times in a file (``init@2``).
NUMBERED = re.compile(r"@\d+$")
_GENERICS = r"<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>"  # a Rust trait's generic arguments, nested up to 2 levels
_TRAIT_FORM = re.compile(rf"<([^<>]*?) as (?:[^<>]|{_GENERICS})*>::|^(impl [^<\s]+){_GENERICS}(?= for )")


def base_name(name: str) -> str:
    """``name`` without its overload's or occurrence's suffix (``Foo.bar(int)``, ``init@2``, C#'s ``Wrapper<,>``) and
    with a Rust trait impl's generic arguments left out: what two names of one symbol share."""
    return NAME_SUFFIX.sub("", _TRAIT_FORM.sub(lambda m: m[1] + "::" if m[1] is not None else m[2], name))


def pair_repeated(olds: tuple[Symbol, ...], news: tuple[Symbol, ...], pairs: dict[str, str], removed: list[Symbol],
                   added: list[Symbol]) -> None:
    """1b. A name defined several times in a file (Go's ``init``, a redefinition) is numbered by position (``init``,
    ``init@2``: :func:`~code_trajectory.symbols.engine.disambiguate`), so deleting the first renumbers the others
    and pairing by name would report the wrong one removed and the survivor modified. When their number changed,
    such definitions are paired by body first (an unchanged one keeps its partner), then the rest in source order; ``removed`` and ``added``
    keep the symbols' order. Linear in the definitions (sets of ids, bodies indexed)."""
    def base(symbol: Symbol) -> str:
        return NUMBERED.sub("", symbol.name)

    groups_old: dict[str, list[Symbol]] = {}
    groups_new: dict[str, list[Symbol]] = {}
    for s in olds:
        groups_old.setdefault(base(s), []).append(s)
    for s in news:
        groups_new.setdefault(base(s), []).append(s)
    open_old = {id(s) for s in removed}
    open_new = {id(s) for s in added}
    changed = False
    for name, mine in groups_old.items():
        theirs = groups_new.get(name)
        if not theirs or len(mine) == len(theirs):  # none added or removed: the positions still match
            continue
        by_name = {s.name: s for s in theirs}
        for s in mine:  # undo the pairing by name within the group
            partner = by_name.get(pairs.get(s.name, ""))
            if partner is not None:
                del pairs[s.name]
                open_old.add(id(s))
                open_new.add(id(partner))
        bodies: dict[object, list[Symbol]] = {}
        for t in theirs:
            if id(t) in open_new:
                bodies.setdefault(t.body_key, []).append(t)
        for s in mine:
            same = bodies.get(s.body_key) if id(s) in open_old else None
            while same and id(same[0]) not in open_new:
                same.pop(0)
            if same:
                t = same.pop(0)
                pairs[s.name] = t.name
                open_old.discard(id(s))
                open_new.discard(id(t))
        for s, t in zip([s for s in mine if id(s) in open_old], [t for t in theirs if id(t) in open_new]):
            pairs[s.name] = t.name
            open_old.discard(id(s))
            open_new.discard(id(t))
        changed = True
    if changed:
        removed[:] = [s for s in olds if id(s) in open_old]
        added[:] = [s for s in news if id(s) in open_new]


def pair_signatures(removed: list[Symbol], added: list[Symbol], pairs: dict[str, str]) -> None:
    """2b. Overloads whose signatures all changed at once (a parameter's type changed in each ``Handle``): as many
    removed as added under one base name, none paired by rule 2, are paired by the most similar signature, then
    by position."""
    groups: dict[str, tuple[list[Symbol], list[Symbol]]] = {}
    for s in removed:
        groups.setdefault(base_name(s.name), ([], []))[0].append(s)
    for s in added:
        if base_name(s.name) in groups:
            groups[base_name(s.name)][1].append(s)
    for olds, news in groups.values():
        if len(olds) < 2 or len(olds) != len(news) or any(s.kind != olds[0].kind for s in (*olds, *news)):
            continue
        scored = sorted((-SequenceMatcher(None, o.name, n.name, autojunk=False).ratio(), abs(i - j), i, j)
                        for i, o in enumerate(olds) for j, n in enumerate(news))
        taken_old: set[int] = set()
        taken_new: set[int] = set()
        for _, _, i, j in scored:
            if i not in taken_old and j not in taken_new:
                taken_old.add(i)
                taken_new.add(j)
                pair(olds[i], news[j], pairs, removed, added)


def pair(r: Symbol, a: Symbol, pairs: dict[str, str], removed: list[Symbol], added: list[Symbol]) -> None:
    """Record ``r`` (old) and ``a`` (new) as one symbol: in ``pairs``, and no longer in ``removed``/``added``."""
    pairs[r.name] = a.name
    removed.remove(r)
    added.remove(a)


def moved_siblings(old: FileAnalysis, new: FileAnalysis, pairs: dict[str, str]) -> tuple[str, ...]:
    """Rule 4's *moved*: the symbols (new names, in source order) whose order among their matched siblings changed
    (outside a longest common order); ``pairs`` maps the old names to the new ones."""
    new_parent = {s.name: s.parent for s in new.symbols}
    groups_old: dict[str | None, list[str]] = {}
    for s in old.symbols:
        if s.name in pairs:
            groups_old.setdefault(new_parent.get(pairs[s.name]), []).append(pairs[s.name])
    groups_new: dict[str | None, list[str]] = {}
    matched = set(pairs.values())
    for s in new.symbols:
        if s.name in matched:
            groups_new.setdefault(s.parent, []).append(s.name)
    moved: set[str] = set()
    for parent, seq_new in groups_new.items():
        in_new = set(seq_new)
        seq_old = [n for n in groups_old.get(parent, []) if n in in_new]
        if seq_old == seq_new:
            continue
        kept = set()
        for block in SequenceMatcher(None, seq_old, seq_new, autojunk=False).get_matching_blocks():
            kept.update(seq_new[block.b:block.b + block.size])
        moved.update(n for n in seq_new if n not in kept)
    return tuple(s.name for s in new.symbols if s.name in moved)
