"""Blob cache (hits, bounds, threads) and the name-lookup helpers."""

from __future__ import annotations

import threading

import pytest

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.symbols import SymbolCache, closest_names, find, language_for, short_name, symbol_span

OLD = b"class App:\n    def run(self):\n        return 1\n\n    def stop(self):\n        pass\n"
NEW = b"class App:\n    def run(self):\n        return 2\n\n    def stop(self):\n        pass\n"


class Blobs:
    """A tiny object store that counts reads."""

    def __init__(self) -> None:
        self.data = {"a" * 40: OLD, "b" * 40: NEW}
        self.reads = 0
        self.lock = threading.Lock()

    def load(self, oid: str) -> bytes | None:
        with self.lock:
            self.reads += 1
        return self.data.get(oid)


def test_same_blob_is_parsed_once():
    cache = SymbolCache()
    blobs = Blobs()
    first = cache.symbols_for_blob("a" * 40, "app.py", lambda: blobs.load("a" * 40))
    second = cache.symbols_for_blob("a" * 40, "src/other.py", lambda: blobs.load("a" * 40))
    assert [s.name for s in first] == ["App", "App.run", "App.stop"]
    assert second == first
    assert (cache.parses, cache.hits, cache.misses, blobs.reads) == (1, 1, 1, 1)


def test_compare_blobs_reuses_cached_analyses():
    cache = SymbolCache()
    blobs = Blobs()
    changes = cache.compare_blobs("app.py", "a" * 40, "b" * 40, blobs.load)
    assert changes.modified == ("App.run",)
    again = cache.compare_blobs("app.py", "a" * 40, "b" * 40, blobs.load)
    assert again.modified == ("App.run",)
    assert cache.parses == 2 and blobs.reads == 2
    added = cache.compare_blobs("app.py", "0" * 40, "b" * 40, blobs.load)
    assert added.kind == "added" and cache.parses == 2
    assert cache.compare_blobs("README.md", "a" * 40, "b" * 40, blobs.load) is None


def test_unsupported_path_and_unreadable_blob_give_none_and_cache_nothing():
    cache = SymbolCache()
    assert cache.symbols_for_blob("c" * 40, "notes.txt", lambda: b"x") is None
    assert cache.symbols_for_blob("c" * 40, "a.py", lambda: None) is None
    assert len(cache) == 0


def test_language_is_part_of_the_key():
    cache = SymbolCache()
    source = b"int f(void) { return 0; }\n"
    assert [s.name for s in cache.symbols_for_blob("d" * 40, "x.c", lambda: source)] == ["f"]
    assert [s.name for s in cache.symbols_for_blob("d" * 40, "x.cpp", lambda: source)] == ["f"]
    assert cache.parses == 2


def test_lru_bound_by_entries_and_symbols():
    cache = SymbolCache(max_entries=2, max_symbols=1000)
    for i in range(3):
        cache.symbols_for_blob(f"{i:040x}", "m.py", lambda i=i: f"def f{i}():\n    pass\n".encode())
    assert len(cache) == 2
    cache.symbols_for_blob(f"{0:040x}", "m.py", lambda: b"def f0():\n    pass\n")
    assert cache.parses == 4  # the oldest entry had been evicted
    small = SymbolCache(max_entries=100, max_symbols=3)
    small.symbols_for_blob("e" * 40, "a.py", lambda: OLD)  # 3 symbols
    small.symbols_for_blob("f" * 40, "a.py", lambda: b"def g():\n    pass\n")
    assert len(small) == 1
    with pytest.raises(InvalidArgumentError):
        SymbolCache(max_entries=0)


def test_threads_share_the_cache_and_parse_each_blob_once():
    cache = SymbolCache()
    blobs = Blobs()
    sources = {f"{i:040x}": f"class C{i}:\n    def m(self):\n        return {i}\n".encode() for i in range(8)}
    blobs.data.update(sources)
    errors: list[BaseException] = []
    results: dict[str, list[str]] = {}
    barrier = threading.Barrier(6)

    def work() -> None:
        try:
            barrier.wait()
            for _ in range(3):
                for oid in sources:
                    syms = cache.symbols_for_blob(oid, "c.py", lambda oid=oid: blobs.load(oid))
                    results[oid] = [s.name for s in syms]
                    language_for("x.js").extract(b"function f() { return 1; }\nclass K { m() {} }\n")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert cache.parses == len(sources) and blobs.reads == len(sources)
    assert results[f"{3:040x}"] == ["C3", "C3.m"]


def test_symbol_span_find_and_closest_names():
    symbols = language_for("s.py").extract(
        b"class Serializer:\n    def loads(self):\n        pass\n\n    def dumps(self):\n        pass\n\n"
        b"class Other:\n    def dumps(self):\n        pass\n")
    assert symbol_span(symbols, "Serializer.loads") == (2, 3)
    assert symbol_span(symbols, "loads") is None
    assert find(symbols, "Serializer.loads").name == "Serializer.loads"
    assert find(symbols, "loads").name == "Serializer.loads"
    assert find(symbols, "nothing") is None
    with pytest.raises(InvalidArgumentError, match="Serializer.dumps, Other.dumps"):
        find(symbols, "dumps")
    with pytest.raises(InvalidArgumentError):
        find(symbols, "  ")
    assert closest_names("App.runn", ["App.run", "App.stop", "Other.walk"]) == ["App.run"]
    assert closest_names("Serializer.load", [s.name for s in symbols], n=1) == ["Serializer.loads"]
    assert closest_names("zzz", ["App.run"]) == []


def test_find_accepts_a_name_without_its_overload_suffix():
    symbols = language_for("A.java").extract(
        b"class A {\n  void bar(int x) {}\n  void bar(String s) {}\n  void baz(int x) {}\n}\n")
    assert [s.name for s in symbols] == ["A", "A.bar(int)", "A.bar(String)", "A.baz"]
    assert find(symbols, "baz").name == "A.baz"
    with pytest.raises(InvalidArgumentError):
        find(symbols, "bar")


def test_find_takes_another_languages_separators():
    """A model writes ``Parser.next`` for Rust's ``Parser::next`` (and ``App::run`` for Python's ``App.run``): found
    when the name's own separators match nothing; a trait's method of the same name is not taken for it."""
    rust = language_for("lib.rs").extract(
        b"struct Parser;\nimpl Parser {\n    fn next(&mut self) -> u8 { 1 }\n}\n"
        b"impl Iterator for Parser {\n    type Item = u8;\n    fn next(&mut self) -> Option<u8> { None }\n}\n")
    assert find(rust, "Parser.next").name == "Parser::next"
    assert find(rust, "Parser::next").name == "Parser::next"
    with pytest.raises(InvalidArgumentError, match="ambiguous"):
        find(rust, "next")
    python = language_for("app.py").extract(b"class App:\n    def run(self):\n        return 1\n")
    assert find(python, "App::run").name == "App.run"
    assert find(python, "Other::run") is None


def test_find_takes_a_php_method_as_php_spells_it():
    """PHP's stack traces write ``Monolog\\Logger->addRecord()``, PHPStan and docs ``\\Monolog\\Logger::addRecord``;
    a file with ``namespace Monolog;`` names it ``Logger::addRecord``: it was "no symbol ..., did you mean"."""
    php = language_for("src/Logger.php").extract(
        b"<?php\nnamespace Monolog;\n\nclass Logger\n{\n    public function addRecord(int $l): bool { return true; }\n}\n"
        b"\nfunction helper() {}\n")
    for spelled in ("Monolog\\Logger::addRecord", "\\Monolog\\Logger::addRecord", "Monolog\\Logger->addRecord()",
                    "Logger->addRecord", "Monolog\\helper"):
        found = find(php, spelled)
        assert found is not None and found.name in ("Logger::addRecord", "helper"), spelled
    assert find(php, "Monolog\\Other::addRecord") is None
    braced = language_for("src/User.php").extract(
        b"<?php\nnamespace App\\Models {\n    class User {\n        public function save() {}\n    }\n}\n")
    assert find(braced, "App\\Models\\User->save()").name == "App\\Models\\User::save"
    # the PHP spelling is rewritten once: a name ending in 1,500 `()` recursed once per pair (RecursionError)
    assert find(php, "addRecord" + "()" * 1500) is None


def test_find_takes_a_signature_as_written_with_its_spaces():
    java = language_for("T.java").extract(
        b"class T {\n  T withBounds(List<? extends TypeName> b) { return this; }\n  T withBounds(int b) { return this; }\n}\n")
    stored = next(s.name for s in java if "List" in s.name)
    assert find(java, "T.withBounds(List<? extends TypeName>)").name == stored
    assert find(java, "withBounds(List<? extends TypeName>)").name == stored


def test_short_name_handles_every_separator():
    assert short_name("Serializer.loads") == "loads"
    assert short_name("a::b::f") == "f"
    assert short_name("Billing::Invoice#total") == "total"
    assert short_name("<Server as fmt::Display>::fmt") == "fmt"
    assert short_name("A.bar(java.lang.String)") == "bar(java.lang.String)"
    assert short_name("App\\Models\\User::save") == "save"


def test_listing_symbols_computes_no_key_and_keys_still_come_later():
    language = language_for("s.py")
    source = OLD + b"\n\ndef helper(x):\n    # double it\n    return x * 2\n"
    analysis = language.analyze(source)
    assert analysis._keys._chunks == {} and analysis._keys._body == {}  # nothing normalised or hashed yet
    symbols = language.extract(source)
    assert symbols[0]._keys.tree is None  # extract() keeps no syntax tree
    # keys read later (the source is parsed again) equal those of an analysis that kept its tree
    assert [(s.body_key, s.own_key, s.own_hash, s.own_comments, s.text_hash) for s in symbols] == [
        (s.body_key, s.own_key, s.own_hash, s.own_comments, s.text_hash) for s in analysis.symbols]
    assert symbols == list(analysis.symbols) and symbols[0] != symbols[1]


def test_comparing_one_changed_method_normalises_only_what_differs():
    from code_trajectory.symbols import compare_analyses

    language = language_for("s.py")
    methods = "".join(f"    def m{i}(self, x):\n        # step {i}\n        return x + {i}\n\n" for i in range(40))
    old = f"import os\n\n\nclass Big:\n    size = 1\n\n{methods}\n\ndef tail():\n    return os.sep\n".encode()
    new = old.replace(b"return x + 17\n", b"return x + 17 * 2\n")
    before = language.analyze(old)
    after = language.analyze(new, previous=before)
    changes = compare_analyses("s.py", before, after)
    assert changes.modified == ("Big.m17",) and changes.kind == "code"
    total = len(after._keys.model().bounds) - 1
    assert total > 80
    assert len(before._keys._chunks) <= 3 and len(after._keys._chunks) <= 3  # the method's own text, mostly
    assert not before._keys._body and not after._keys._body  # no body key hashed


def test_symbols_are_immutable_values():
    symbols = language_for("a.py").extract(OLD)
    with pytest.raises(AttributeError):
        symbols[0].name = "Other"
    again = language_for("a.py").extract(OLD)
    assert again == symbols and hash(again[1]) == hash(symbols[1])
    assert "App.run" in repr(symbols[1])


def test_history_walk_parses_each_version_once_and_keeps_few_trees():
    cache = SymbolCache(max_trees=2)
    blobs = Blobs()
    versions = [OLD.replace(b"return 1", f"return {i}".encode()) for i in range(12)]
    oids = [f"{i + 100:040x}" for i in range(len(versions))]
    blobs.data.update(zip(oids, versions))
    for a, b in zip(oids, oids[1:]):
        assert cache.compare_blobs("app.py", a, b, blobs.load).modified == ("App.run",)
    assert cache.parses == len(versions) and blobs.reads == len(versions)
    assert sum(1 for a in cache._data.values() if a._keys.tree is not None) <= 2


def test_cache_is_bounded_by_source_bytes():
    cache = SymbolCache(max_bytes=len(OLD) * 2)
    for i in range(4):
        cache.symbols_for_blob(f"{i + 200:040x}", "m.py", lambda i=i: OLD + b"\n" * i)
    assert len(cache) == 1  # each source is a little over len(OLD): two never fit
    with pytest.raises(InvalidArgumentError):
        SymbolCache(max_bytes=0)


def test_chunk_layout_of_nested_overlapping_and_empty_spans():
    from code_trajectory.symbols.chunks import Model

    nested = Model([0, 2, 10], [20, 8, 15], 30)  # one walk, no sort
    assert nested.positions == [0, 2, 8, 10, 15, 20] and nested.spans == [0, 1, ~1, 2, ~2, ~0]
    assert nested.items[0] == [1, ~1, 3, ~2, 5] and nested.top_items == [0, ~0, 6]
    assert nested.owner == [-1, 0, 1, 0, 2, 0, -1] and (nested.first, nested.last) == ([1, 2, 4], [5, 2, 4])
    overlapping = Model([0, 5], [10, 15], 20)  # sorted events, as the one-pass rules want
    assert overlapping.positions == [0, 5, 10, 15] and overlapping.spans == [0, 1, ~0, ~1]
    empty = Model([0, 4, 6], [10, 4, 8], 12)  # an empty span (broken code) does not raise
    assert empty.positions == [0, 4, 4, 6, 8, 10]
