"""Finding symbols by name for narratives and tool arguments."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.core.text import shown_pair

from .base import OVERLOAD_SUFFIX, Symbol, short_name
from .specs import SEPARATOR_IN_STRING, TEST_SEPARATOR

_SEPARATORS = (".", "::", "#", "\\", TEST_SEPARATOR)
_ANY_SEPARATOR = re.compile(r"::|#|\\")
#: The occurrence suffix of a disambiguated name (see :class:`~code_trajectory.symbols.base.Symbol`).
_OCCURRENCE = re.compile(r"^(.+)@(\d+)$")
#: A Go method as Go's tools spell it (stack traces, pprof, ``go doc``): ``(*FlagSet).Parse``, ``(FlagSet).Parse``,
#: with a package path (``github.com/spf13/pflag.(*FlagSet).Parse``) or type arguments (``(*Stack[...]).Push``).
_GO_METHOD = re.compile(r"^(?:[\w./-]*\.)?\(\*?\s*(\w+)(?:\[[^()]*\])?\)\.(\w+)$")


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``12th``, ``21st`` ..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def readable(name: str, quote: bool = False) -> str:
    """A qualified name as a reader understands it: ``Context.invoke@3`` (the third definition of ``invoke`` in
    ``Context`` in one file, see :func:`code_trajectory.symbols.engine.disambiguate`) is
    ``3rd definition of Context.invoke``; any other name is itself. ``quote`` puts the name in backticks.
    Machine-readable data keeps the name itself."""
    found = _OCCURRENCE.match(name)
    base = found.group(1) if found else name
    shown = f"`{base}`" if quote else base
    return f"{ordinal(int(found.group(2)))} definition of {shown}" if found else shown


def renamed_said(old: str, new: str, say: Callable[[str], str] = readable) -> str:
    """A rename as an answer says it, ``old -> new``, each name as ``say`` writes it (:func:`readable` by default);
    two names that look the same (``Kab`` made ``Ka\\u200bb``: a zero-width space) with their invisible characters
    escaped (:func:`~code_trajectory.core.text.shown_pair`)."""
    return " -> ".join(shown_pair(old, new, say))


def occurrences(symbols: Iterable[Symbol], name: str) -> list[Symbol]:
    """The definitions that share ``name`` once its occurrence suffix is dropped (``fetch``, ``fetch@2``,
    ``fetch@3`` for ``fetch@2``; see :func:`code_trajectory.symbols.engine.disambiguate`), in source order; for a
    name without repeated definitions, the one symbol so named (or none)."""
    found = _OCCURRENCE.match(name)
    base = found.group(1) if found else name
    out = []
    for s in symbols:
        other = _OCCURRENCE.match(s.name)
        if s.name == base or (other is not None and other.group(1) == base):
            out.append(s)
    return out


def symbol_span(symbols: Iterable[Symbol], qualified_name: str) -> tuple[int, int] | None:
    """Return ``(start_line, end_line)`` (1-based, inclusive) of the symbol with exactly this name, or ``None``."""
    for s in symbols:
        if s.name == qualified_name:
            return s.start_line, s.end_line
    return None


def find(symbols: Sequence[Symbol], name: str, *, php: bool = True) -> Symbol | None:
    """Return the symbol called ``name``: its exact qualified name, or an unambiguous shorter form.

    A shorter form is a suffix of the qualified name starting after a separator (``loads``
    or ``Serializer.loads`` for ``pkg.Serializer.loads``), or the name without its overload
    disambiguation (``bar`` for a single ``Foo.bar(int)``). When nothing matches so, the name's
    separators are taken as any language's (``Parser.next`` finds Rust's ``Parser::next``, ``Foo::bar``
    Python's ``Foo.bar``), by the same rules; then a name with spaces is compared without them (a Java
    signature as written, ``withBounds(List<? extends TypeName>)``, is stored as its parser spells it); then a C#
    generic type (``Wrapper<,>``) is found by its type parameters (``Wrapper<TRequest, TResponse>``) or, when that
    names one, without them (``Wrapper``, ``Wrapper.Handle``). A Go
    method as Go's tools spell it, ``(*FlagSet).Parse`` or ``pflag.(*FlagSet).Parse``, is ``FlagSet.Parse``; a PHP
    method as PHP's stack traces and tools spell it, ``Monolog\\Logger->addRecord()`` or ``\\Monolog\\Logger::addRecord``,
    is ``Logger::addRecord`` when its file's names have no namespace (``namespace Monolog;``, not braced);
    ``php=False`` leaves that last form out (the PHP spelling is rewritten once, never again).

    Returns:
        The symbol, or ``None`` when nothing matches (see :func:`closest_names` for suggestions).

    Raises:
        InvalidArgumentError: ``name`` is empty, or matches several symbols (the message lists them).
    """
    if not name or not name.strip():
        raise InvalidArgumentError("symbol name is empty")
    name = as_named(name)
    for s in symbols:
        if s.name == name:
            return s
    matches = [s for s in symbols if _suffix_match(s.name, name)]
    if not matches:
        matches = [s for s in symbols if _suffix_match(_strip_overload(s.name), name)]
    if not matches:  # another language's separators: Parser.next for Parser::next
        canonical = _any_separator(name)
        matches = [s for s in symbols if _any_separator(s.name) == canonical] or [
            s for s in symbols if _suffix_match(_any_separator(s.name), canonical)]
    if not matches and any(SEPARATOR_IN_STRING in s.name for s in symbols):  # a test's string holding " > "
        plain = name.replace(SEPARATOR_IN_STRING, TEST_SEPARATOR)
        typed = [(s, s.name.replace(SEPARATOR_IN_STRING, TEST_SEPARATOR)) for s in symbols]
        matches = [s for s, n in typed if n == plain] or [s for s, n in typed if _suffix_match(n, plain)]
    if not matches and any(ch.isspace() for ch in name):  # a signature as written: List<? extends T>
        tight = "".join(name.split())
        matches = [s for s in symbols if "".join(s.name.split()) == tight] or [
            s for s in symbols if _suffix_match("".join(s.name.split()), tight)]
    if not matches and ("<" in name or any("<" in s.name for s in symbols)):
        matches = _generic_matches(symbols, name)
    if not matches and php:  # PHP as its stack traces write it: Monolog\Logger->addRecord() for Logger::addRecord
        spelled = name.lstrip("\\").replace("->", "::").removesuffix("()")
        head, sep, member = spelled.partition("::")
        spelled = head.rsplit("\\", 1)[-1] + sep + member  # no `namespace X;` prefix
        if spelled != name:
            return find(symbols, spelled, php=False)  # once: a name of 1,500 `()` recursed past Python's limit
    if len(matches) == 1:
        return matches[0]
    if matches:
        listed = ", ".join(s.name for s in matches[:10])
        raise InvalidArgumentError(f"symbol name {name!r} is ambiguous: it matches {listed}; pass the qualified name")
    return None


def as_named(name: str) -> str:
    """``name`` as a symbol is named here: stripped, a Go method as Go's tools spell it (``(*FlagSet).Parse``) as
    ``FlagSet.Parse``; what :func:`find` matches exactly."""
    name = name.strip()
    go_method = _GO_METHOD.match(name)
    return f"{go_method.group(1)}.{go_method.group(2)}" if go_method else name  # the receiver's type names it


def closest_names(name: str, names: Iterable[str], n: int = 3) -> list[str]:
    """Return up to ``n`` names most similar to ``name`` (best first), for "did you mean" hints.

    Each candidate is scored by :class:`difflib.SequenceMatcher` ratio on the full qualified
    names and on their last components, keeping the better; candidates scoring below 0.6
    (difflib's ``get_close_matches`` default cutoff) are dropped. ``App.runn`` -> ``["App.run"]``.
    """
    if n < 1:
        return []
    short = short_name(name)
    scored = []
    for candidate in dict.fromkeys(names):
        full = difflib.SequenceMatcher(None, name, candidate).ratio()
        part = difflib.SequenceMatcher(None, short, short_name(candidate)).ratio()
        score = max(full, part * 0.95)
        if score >= 0.6:
            scored.append((-score, candidate))
    scored.sort()
    return [c for _, c in scored[:n]]


def overloads_of(name: str, names: Iterable[str]) -> list[str]:
    """The names that are ``name`` with parameter types (``Foo.bar(int)``, ``Foo.bar(String)`` for ``Foo.bar`` or
    ``bar``), once each, in order: what a name written without its overload's types may have meant."""
    name = name.strip()
    return [n for n in dict.fromkeys(names) if _strip_overload(n) != n and (
        _strip_overload(n) == name or _suffix_match(_strip_overload(n), name))]


def _generic_matches(symbols: Sequence[Symbol], name: str) -> list[Symbol]:
    """C# generic types, named by their arity (``Wrapper<,>.Handle``): asked for with their type parameters
    (``Wrapper<TRequest, TResponse>.Handle``), or without them when that names one (``Wrapper.Handle``)."""
    unbound, bare = _unbound("".join(name.split())), _unbound("".join(name.split()), keep=False)
    matches = [s for s in symbols if _unbound(s.name) == unbound] or [
        s for s in symbols if _suffix_match(_unbound(s.name), unbound)]
    if not matches:
        matches = [s for s in symbols if _unbound(s.name, keep=False) == bare] or [
            s for s in symbols if _suffix_match(_unbound(s.name, keep=False), bare)]
    if not matches:  # one overload of a generic type's method (several: the caller suggests them)
        matches = [s for s in symbols if _suffix_match(_strip_overload(_unbound(s.name, keep=False)), bare)]
        matches = matches if len(matches) == 1 else []
    return matches


def _unbound(name: str, keep: bool = True) -> str:
    """``name`` with each ``<...>`` written as its arity, as C# writes an unbound generic type (``Map<K, V<T>>`` ->
    ``Map<,>``), or left out (``keep=False``: ``Map``)."""
    if "<" not in name:
        return name
    out: list[str] = []
    depth = 0
    for ch in name:
        if ch == "<":
            depth += 1
            if depth == 1 and keep:
                out.append("<")
        elif ch == ">" and depth:
            depth -= 1
            if depth == 0 and keep:
                out.append(">")
        elif depth == 0:
            out.append(ch)
        elif depth == 1 and ch == "," and keep:
            out.append(",")
    return "".join(out)


def _suffix_match(qualified: str, name: str) -> bool:
    if not qualified.endswith(name) or len(qualified) == len(name):
        return False
    head = qualified[: len(qualified) - len(name)]
    return head.endswith(_SEPARATORS)


def _any_separator(name: str) -> str:
    """``name`` with each separator of :data:`_SEPARATORS` written as ``.``."""
    return _ANY_SEPARATOR.sub(".", name)


def _strip_overload(qualified: str) -> str:
    found = OVERLOAD_SUFFIX.search(qualified)
    return qualified[: found.start()] if found is not None and found[0].startswith("(") else qualified
