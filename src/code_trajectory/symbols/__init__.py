"""Per-language symbol extraction with tree-sitter, and symbol-level change detection.

Public API::

    language_for(path) -> LanguageSupport | None          # registry
    LanguageSupport.extract(source: bytes) -> list[Symbol]
    LanguageSupport.analyze(source: bytes, previous=None) -> FileAnalysis   # keys computed on first read
    compare(path, old: bytes | None, new: bytes | None) -> SymbolChanges | None
    symbols_for_blob(oid, path, load) / compare_blobs(path, old_oid, new_oid, load)   # cached
    symbol_span(symbols, name), find(symbols, name), closest_names(name, names, n=3)
    overloads_of(name, names)  # Foo.bar(int), Foo.bar(String) for Foo.bar
    readable(name)  # "3rd definition of Context.invoke" for Context.invoke@3
    occurrences(symbols, name)  # fetch, fetch@2, fetch@3: the repeated definitions of one name
    SymbolChanges.comment_parts()  # "docstring of `echo` changed", short comment edits quoted

Importing this package imports neither ``tree_sitter`` nor any grammar; a language's
grammar is imported when that language first parses something.
"""

from .base import MAX_SOURCE_BYTES, FileAnalysis, LanguageSupport, Symbol, short_name
from .cache import DEFAULT_CACHE, SymbolCache, compare_blobs, symbols_for_blob
from .changes import CHANGE_KINDS, SymbolChanges, compare, compare_analyses
from .comments import CommentEdit
from .lookup import closest_names, find, occurrences, overloads_of, readable, symbol_span
from .registry import language_for, supported_extensions

__all__ = [
    "CHANGE_KINDS", "DEFAULT_CACHE", "CommentEdit", "MAX_SOURCE_BYTES", "FileAnalysis", "LanguageSupport", "Symbol",
    "SymbolCache", "SymbolChanges", "closest_names", "compare", "compare_analyses", "compare_blobs", "find",
    "language_for", "occurrences", "overloads_of", "readable", "short_name", "supported_extensions", "symbol_span", "symbols_for_blob",
]
