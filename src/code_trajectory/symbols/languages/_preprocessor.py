"""What C-family grammars misread in preprocessed source, blanked for parsing (a copy of the same length and lines:
see :meth:`~code_trajectory.symbols.engine.TreeSitterLanguage.parsed_text`). No grammar is imported here.

* :func:`blank_conditions`: each ``#if``/``#elif`` condition made one identifier of its length (C#, C++);
* :func:`blank_macros`: object- and function-like macros in upper case where the grammar expects a declaration
  (C++: ``FMT_CONSTEXPR inline void f()``, ``class BASE_EXPORT Watcher``, ``class COMPONENT_EXPORT(NET) Request``,
  ``FMT_BEGIN_NAMESPACE`` on its own line, ``FMT_TRY {``, ``FMT_ENABLE_IF(N > 1)`` as a template parameter,
  ``void Lock() EXCLUSIVE_LOCK_FUNCTION() {``).

Every pattern here is linear in its input: possessive quantifiers and no lazy part before a trailing one (a hostile
file with a 300 KB line must not freeze the analysis).
"""

from __future__ import annotations

import re

#: A ``#if``/``#elif`` line: its keyword, its condition to the end of the line and over the lines a ``\\`` at a
#: line's end continues it to (linear: no lazy part before a trailing one, which a line of blanks would make
#: quadratic; trailing blanks are split off in Python).
_CONDITION = re.compile(rb"(?m)^([ \t]*#[ \t]*(?:if|elif)\b[ \t]*)((?:[^\r\n\\]|\\\r?\n|\\)*+)")

#: One macro: an upper-case word of two characters or more (a whole word: not the ``DBI`` of ``DBImpl``), with its arguments when they are on its line without
#: parentheses nested more than once (strings in them whole: ``PRAGMA(diagnostic ignored "-Wx")``), then blanks.
_ARGUMENT = rb"(?:[^()\"'\r\n]|\"[^\"\\\r\n]*+\")"
_MACRO = rb"[A-Z][A-Z0-9_]++(?![a-z])(?:\((?:" + _ARGUMENT + rb"|\(" + _ARGUMENT + rb"*+\))*+\))?+[ \t]*+"

#: Macros at the start of a line (after declaration keywords or a one-line template header), then what follows them
#: (a word and what comes after it, ``~``, ``{``, ``;``, a comment or the end of the line).
_LEADING = re.compile(rb"(?m)^[ \t]*+(?:(?:constexpr|inline|static|extern|friend|virtual|explicit)[ \t]++"
                      rb"|template[ \t]*+<[^<>\r\n]*+>[ \t]*+)*+((?:" + _MACRO + rb")++)"
                      rb"(~|\{|//|;|[A-Za-z_]\w*+[ \t*&<(:]|\r?$)")

#: Macros between ``class``/``struct``/``union`` and the type's name (``class BASE_EXPORT Watcher``; the last of them
#: when the name is in capitals too: ``class LEVELDB_EXPORT DB {``).
_TYPE_KEYWORD = re.compile(rb"\b(?:class|struct|union)[ \t]++((?:" + _MACRO + rb")++)(?=[A-Za-z_{:])(?!final\b)")

#: A function-like macro as the last template parameter (``template <typename T, FMT_ENABLE_IF(N > 1)>``), its
#: arguments over lines and one level of parentheses deep: ``<``, ``>`` and ``<=`` in them end the parameter list for
#: the grammar.
_TEMPLATE_PARAMETER = re.compile(rb"([<,][ \t]*+(?:\r?\n[ \t]*+)?)([A-Z][A-Z0-9_]++\((?:[^()\r\n]|\r?\n|\((?:[^()\r\n]|"
                                 rb"\r?\n)*+\))*+\))(?=[ \t]*+>)")

#: A macro between ``if`` and its condition (``if FMT_CONSTEXPR20 (x)``, which stands for ``if constexpr``).
_IF_MACRO = re.compile(rb"\bif[ \t]++([A-Z][A-Z0-9_]++)(?=[ \t]*+\()")

#: Macros after a parameter list (and its qualifiers; on its line or the next) before a body, an initializer list, ``;`` or ``=``: thread-safety
#: annotations (``void Lock() EXCLUSIVE_LOCK_FUNCTION() {``, ``void F() const EXCLUSIVE_LOCKS_REQUIRED(lock_);``).
_TRAILING = re.compile(rb"\)[ \t]*+(?:\r?\n[ \t]*+)?(?:(?:const|volatile|noexcept|override|final)[ \t]*+)*+((?:" + _MACRO + rb")++)"
                       rb"(?=[{;=:])")

_NOT_BREAK = re.compile(rb"(?:[^\r\n\\]|\\(?![\r\n]))++")

_CONTINUED = re.compile(rb"\\\r?\n\Z")

_BRACE_NEXT = re.compile(rb"[ \t]*+\r?\n[ \t]*+\{")


def blank_conditions(source: bytes) -> bytes:
    """``source`` with each ``#if``/``#elif`` condition made one identifier of its length (``#if X___...``): which
    branch is taken never names a symbol, and grammars misread some conditions (C#'s ``#if !(A || B)`` in a base
    list, C++'s ``#if __has_include(<version>)``). Returns ``source`` itself when it has no ``#``."""
    if b"#" not in source:
        return source
    return _CONDITION.sub(_blank_condition, source)


def blank_macros(source: bytes) -> bytes:
    """``source`` with upper-case macros (two characters or more) blanked where tree-sitter-cpp expects a declaration
    or a statement, the length and lines kept:

    * first on a line (after ``static``, ``constexpr``..., or a one-line ``template <...>``) before a declaration
      (``FMT_API auto f()``, ``NOINLINE void Crash()``, ``FMT_CONSTEXPR20 ~T()``); first on the line, they become one
      attribute ``[[X___]]`` so that the declaration's span starts where they do;
    * alone on their line or before ``;`` (``FMT_BEGIN_NAMESPACE``, ``FMT_PRAGMA_CLANG(diagnostic push)``,
      ``DISALLOW_COPY_AND_ASSIGN(T);``), but not ``TEST(Suite, Name)`` whose body opens on the next line;
    * before a ``{`` when they take no arguments (``FMT_TRY {``; ``TEST(Suite, Name) {`` is a definition);
    * between ``class``/``struct``/``union`` and a type's name (``class BASE_EXPORT Watcher``,
      ``class COMPONENT_EXPORT(NET) Request``), between ``if`` and its condition (``if FMT_CONSTEXPR20 (x)``);
    * after a parameter list before a body, ``:``, ``;`` or ``=`` (``void Lock() EXCLUSIVE_LOCK_FUNCTION() {``);
    * as the last template parameter (``FMT_ENABLE_IF(N > 1)>``, made ``typename X___``).

    A macro followed by an operator, ``,`` or ``=`` (``CHECK(x) << m``, an enumerator) is kept."""
    text = _TYPE_KEYWORD.sub(_blank_type_macros, _LEADING.sub(_blank_leading, source))
    text = _TRAILING.sub(_blank_group, _IF_MACRO.sub(_blank_group, text))
    return _TEMPLATE_PARAMETER.sub(_type_parameter, text)


def _blank_condition(match: re.Match[bytes]) -> bytes:
    keyword, rest = match.groups()
    condition = rest.rstrip(b" \t")
    if not condition:
        return match.group(0)
    # one identifier on the first line, blanks on the lines it continues to (their breaks and \\ kept)
    first = _NOT_BREAK.match(condition)
    if first is None:  # "#if \\" with the condition on the next line: left as written
        return match.group(0)
    width = first.end()
    blank = b"X" + b"_" * (width - 1) + _NOT_BREAK.sub(lambda m: b" " * len(m.group(0)), condition[width:])
    return keyword + blank + rest[len(condition):]


def _blank_leading(match: re.Match[bytes]) -> bytes:
    macros, after = match.group(1), match.group(2)
    if _CONTINUED.search(match.string, max(0, match.start() - 3), match.start()):  # a #define's body
        return match.group(0)
    if after == b"{" and b"(" in macros:  # TEST(Suite, Name) {: a definition, not a statement
        return match.group(0)
    if (not after or after == b"\r") and b"(" in macros and _BRACE_NEXT.match(match.string, match.end()):
        return match.group(0)
    start = match.start(1) - match.start(0)
    text = match.group(0)
    first = not text[:start].strip()  # an attribute after "constexpr" would be misread in its turn
    blank = _attribute(macros) if first and after and after not in (b"\r", b"//", b";") else b" " * len(macros)
    return text[:start] + blank + text[start + len(macros):]


def _attribute(macros: bytes) -> bytes:
    """Macros first on their line before a declaration as one attribute of their length (``[[X______]]``), which
    tree-sitter-cpp takes as the declaration's own (its span starts there); blanks when too short for one."""
    words = macros.rstrip(b" \t")
    if len(words) < 5:
        return b" " * len(macros)
    return b"[[X" + b"_" * (len(words) - 5) + b"]]" + macros[len(words):]


def _blank_group(match: re.Match[bytes]) -> bytes:
    """The match with its first group blanked."""
    text, start = match.group(0), match.start(1) - match.start(0)
    return text[:start] + b" " * len(match.group(1)) + text[start + len(match.group(1)):]


def _type_parameter(match: re.Match[bytes]) -> bytes:
    """A macro as a template parameter made a type parameter of its length (``typename X____``), the lines its
    arguments go on to blanked; left as written when its first line is too short for one."""
    before, call = match.groups()
    first = _NOT_BREAK.match(call)
    width = first.end() if first is not None else 0
    if width < len(b"typename X"):
        return match.group(0)
    return before + b"typename X" + b"_" * (width - 10) + _NOT_BREAK.sub(lambda m: b" " * len(m.group(0)), call[width:])


def _blank_type_macros(match: re.Match[bytes]) -> bytes:
    """Macros after ``class``: all blanked before a name; before ``{`` or ``:`` the last is the name (kept) and
    those before it blanked; one alone (``class FOO {``) is the name."""
    if match.string[match.end():match.end() + 1] not in (b"{", b":"):
        return _blank_group(match)
    macros = match.group(1)
    words = macros.rstrip(b" \t")
    cut = max(words.rfind(b" "), words.rfind(b"\t")) + 1
    if cut == 0 or b"(" in words[cut:]:
        return match.group(0)
    start = match.start(1) - match.start(0)
    text = match.group(0)
    return text[:start] + b" " * cut + text[start + cut:]
