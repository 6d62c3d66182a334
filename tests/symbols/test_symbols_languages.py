"""Extraction per language with the real grammars: exact qualified names, kinds and 1-based line spans."""

from __future__ import annotations

import textwrap

import pytest

from code_trajectory.history.versions import describe_symbols
from code_trajectory.symbols import compare, language_for


def extract(path: str, source: str) -> list[tuple[str, str, int, int]]:
    language = language_for(path)
    assert language is not None, path
    return [(s.name, s.kind, s.start_line, s.end_line) for s in language.extract(textwrap.dedent(source).encode())]


def test_python_classes_methods_nested_and_decorators():
    got = extract("pkg/serializer.py", '''\
        import json


        class Serializer:
            """Signs and serialises."""

            default_salt = b"itsdangerous"

            @staticmethod
            def loads(s):
                return json.loads(s)

            def dumps(self, obj):
                def encode(o):
                    return json.dumps(o)
                return encode(obj)

            class Options:
                pass


        async def main():
            return Serializer()
        ''')
    assert got == [
        ("Serializer", "class", 4, 19),
        ("Serializer.loads", "method", 9, 11),
        ("Serializer.dumps", "method", 13, 16),
        ("Serializer.dumps.encode", "function", 14, 15),
        ("Serializer.Options", "class", 18, 19),
        ("main", "function", 22, 23),
    ]


def test_python_property_setter_is_named_by_its_decorator():
    got = extract("a.py", '''\
        class Point:
            @property
            def x(self):
                return self._x

            @x.setter
            def x(self, value):
                self._x = value
        ''')
    assert [name for name, *_ in got] == ["Point", "Point.x", "Point.x(setter)"]
    assert got[1][2:] == (2, 4) and got[2][2:] == (6, 8)


def test_javascript_functions_classes_arrows_objects_and_exports():
    got = extract("web/app.mjs", '''\
        import fs from "fs";
        export default function () {}
        export function load(path) {
          return fs.readFileSync(path);
        }
        const parse = (text) => JSON.parse(text);
        let a = function () {}, b = () => 2;
        export const api = {
          get(url) { return url; },
          post: async (url) => url,
          retries: 3,
        };
        class Store extends Base {
          get size() { return 1; }
          set size(v) {}
          static open() { return new Store(); }
          handle = () => { const inner = () => 1; };
        }
        module.exports.helper = function () {};
        Store.prototype.legacy = function () {};
        ''')
    assert got == [
        ("default", "function", 2, 2),
        ("load", "function", 3, 5),
        ("parse", "function", 6, 6),
        ("a", "function", 7, 7),
        ("b", "function", 7, 7),
        ("api", "object", 8, 12),
        ("api.get", "method", 9, 9),
        ("api.post", "method", 10, 10),
        ("Store", "class", 13, 18),
        ("Store.size(get)", "method", 14, 14),
        ("Store.size(set)", "method", 15, 15),
        ("Store.open", "method", 16, 16),
        ("Store.handle", "method", 17, 17),
        ("Store.handle.inner", "function", 17, 17),
        ("module.exports.helper", "function", 19, 19),
        ("Store.prototype.legacy", "function", 20, 20),
    ]


def test_members_of_an_object_assigned_to_module_exports_are_its_members():
    # `module.exports = {parse: function ...}` beside `function parse` read as a 2nd definition of `parse`
    got = extract("lib/index.js", '''\
        function parse(text) {
          return text;
        }
        module.exports = {
          parse: function (text) { return parse(text); },
          run() { return 1; },
          version: 2,
        };
        Store.prototype = { open() {} };
        ''')
    assert got == [
        ("parse", "function", 1, 3),
        ("module.exports", "object", 4, 8),
        ("module.exports.parse", "method", 5, 5),
        ("module.exports.run", "method", 6, 6),
        ("Store.prototype", "object", 9, 9),
        ("Store.prototype.open", "method", 9, 9),
    ]


def test_members_of_an_object_literal_passed_to_a_call_are_named_by_the_call():
    # ky's tests: `withPerformanceObserver({async test() {...}})` three times read as three top-level `test`s; in a
    # test block (`test('retries', ...)`, a symbol of its own) they are named in it
    source = '''\
        test('retries', async t => {
          await withPerformanceObserver({
            t,
            async test() {
              await ky(url, {retry: {limit: 1, delay: n => 10}});
            },
          });
        });
        test('again', async t => {
          await withPerformanceObserver({t, async test() {}});
        });
        export default new Vue({methods: {save() {}}, data: () => ({})});
        make()({run() {}});
        const api = {get() {}};
        function helper() {
          return {next() {}};
        }
        '''
    expected = [
        ("test retries", "test", 1, 8),
        ("test retries > withPerformanceObserver.test", "method", 4, 6),
        ("test retries > withPerformanceObserver.test.ky.delay", "function", 5, 5),
        ("test again", "test", 9, 11),
        ("test again > withPerformanceObserver.test", "method", 10, 10),
        ("Vue.save", "method", 12, 12),
        ("Vue.data", "function", 12, 12),
        ("run", "method", 13, 13),
        ("api", "object", 14, 14),
        ("api.get", "method", 14, 14),
        ("helper", "function", 15, 17),
        ("helper.next", "method", 16, 16),
    ]
    assert extract("test/fetch.ts", source) == expected
    assert extract("test/fetch.js", source) == expected
    changes = compare("test/fetch.ts", b"", textwrap.dedent(source).encode())
    assert changes is not None
    said = describe_symbols(changes, lean=True)
    assert said.startswith("added test retries (withPerformanceObserver.test, withPerformanceObserver.test.ky.delay), "
                           "test again (withPerformanceObserver.test), Vue.save"), said  # each test's own callbacks


def test_typescript_types_namespaces_and_overload_signatures():
    got = extract("src/repo.ts", '''\
        export interface Repo<T> {
          load(key: string): T;
        }
        export type Key = string | number;
        export enum Mode { Read, Write }
        namespace Util {
          export function clamp(x: number): number { return x; }
        }
        export abstract class Base<T> implements Repo<T> {
          private cache = (k: string) => k;
          abstract load(key: string): T;
          constructor(private dir: string) {}
        }
        function over(a: string): void;
        function over(a: any) {}
        ''')
    assert got == [
        ("Repo", "interface", 1, 3),
        ("Repo.load", "method", 2, 2),  # an interface's method: a symbol of its own
        ("Key", "type", 4, 4),
        ("Mode", "enum", 5, 5),
        ("Util", "namespace", 6, 8),
        ("Util.clamp", "function", 7, 7),
        ("Base", "class", 9, 13),
        ("Base.cache", "method", 10, 10),
        ("Base.load", "method", 11, 11),  # an abstract method too
        ("Base.constructor", "constructor", 12, 12),
        ("over", "function", 14, 15),  # its overload signature is part of it: changing one modifies it
    ]


def test_typescript_method_overload_signatures_are_the_methods():
    got = extract("src/client.ts", '''\
        export class Client {
          get(url: string): string;
          // the URL form
          get(url: URL): string;
          get(url: any): string { return ""; }
          static of(x: string): Client;
          static of(x: any): Client { return new Client(); }
          put(url: string): void;
          other(): void {}
        }
        ''')
    assert got == [
        ("Client", "class", 1, 10),
        ("Client.get", "method", 2, 5),  # its signatures and the comment between them: changing one modifies it
        ("Client.of", "method", 6, 7),
        ("Client.other", "method", 9, 9),  # another method's signature is not its
    ]


def test_tsx_uses_the_tsx_grammar():
    language = language_for("ui/Button.tsx")
    assert language is not None and language.name == "tsx"
    got = extract("ui/Button.tsx", '''\
        export const Button = ({ label }: Props) => <button className="b">{label}</button>;
        export function List<T,>(props: { items: T[] }) {
          return <ul>{props.items.map((i) => <li>{String(i)}</li>)}</ul>;
        }
        ''')
    assert got == [("Button", "function", 1, 1), ("List", "function", 2, 4)]


def test_go_receivers_generics_and_types():
    got = extract("server.go", '''\
        package server

        import "net/http"

        type Server[T any] struct {
        	mux *http.ServeMux
        }

        type Handler interface {
        	Serve()
        }

        type ID int

        func (s *Server[T]) Start() error {
        	return nil
        }

        func (s Server[T]) Stop() {}

        func New() *Server[int] { return nil }
        ''')
    assert got == [
        ("Server", "struct", 5, 7),
        ("Handler", "interface", 9, 11),
        ("Handler.Serve", "method", 10, 10),
        ("ID", "type", 13, 13),
        ("Server.Start", "method", 15, 17),
        ("Server.Stop", "method", 19, 19),
        ("New", "function", 21, 21),
    ]


def test_rust_impls_traits_modules_and_trait_method_collisions():
    got = extract("src/lib.rs", '''\
        use std::fmt;

        mod net {
            pub mod tcp {
                pub fn connect() {}
            }
        }

        /// A server.
        #[derive(Debug)]
        pub struct Server {
            port: u16,
        }

        pub trait Greet {
            fn hi(&self);
            fn bye(&self) {}
        }

        impl Server {
            pub fn start(&self) {}
        }

        impl Greet for Server {
            fn hi(&self) {}
        }

        impl fmt::Display for Server {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
        }

        impl fmt::Debug for Server {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
        }
        ''')
    assert got == [
        ("net", "module", 3, 7),
        ("net::tcp", "module", 4, 6),
        ("net::tcp::connect", "function", 5, 5),
        ("Server", "struct", 9, 13),
        ("Greet", "trait", 15, 18),
        ("Greet::hi", "method", 16, 16),  # a required method, without a body
        ("Greet::bye", "method", 17, 17),
        ("impl Server", "impl", 20, 22),
        ("Server::start", "method", 21, 21),
        ("impl Greet for Server", "impl", 24, 26),
        ("Server::hi", "method", 25, 25),
        ("impl fmt::Display for Server", "impl", 28, 30),
        ("<Server as fmt::Display>::fmt", "method", 29, 29),
        ("impl fmt::Debug for Server", "impl", 32, 34),
        ("<Server as fmt::Debug>::fmt", "method", 33, 33),
    ]



def test_rust_trait_impls_for_a_type_and_a_reference_to_it_are_told_apart_by_the_reference():
    # serde_json's value/de.rs and value/mod.rs implement one trait for Value and for &'de Value: both impls and
    # their methods were named for Value, the second "@2" (the "2nd definition of <Value as Default>::default")
    got = extract("src/value/mod.rs", '''\
        impl Default for Value {
            fn default() -> Value { Value::Null }
        }

        impl<'a> Default for &'a Value {
            fn default() -> Self { &Value::Null }
        }

        impl<'de> serde::Deserializer<'de> for Value {
            fn deserialize_any(self) {}
        }

        impl<'de> serde::Deserializer<'de> for &'de Value {
            fn deserialize_any(self) {}
        }

        impl<'a> Iterator for &'a mut Values {
            fn next(&mut self) {}
        }

        impl Iterator for Values {
            fn next(&mut self) {}
        }
        ''')
    # (an impl for a reference keeps it, so the type's own impl and its methods have their plain names)
    assert [name for name, *_ in got] == [
        "impl Default for Value", "Value::default",
        "impl Default for &Value", "<&Value as Default>::default",
        "impl serde::Deserializer for Value", "Value::deserialize_any",
        "impl serde::Deserializer for &Value", "<&Value as serde::Deserializer>::deserialize_any",
        "impl Iterator for &mut Values", "<&mut Values as Iterator>::next",
        "impl Iterator for Values", "Values::next",
    ]


def test_rust_a_trait_impl_for_a_reference_names_its_methods_for_the_reference():
    """``impl<M: Trait> Trait for &M`` alone (a blanket impl, as ``impl<R: Read> Read for &mut R``) was named
    ``impl Trait for M`` and its methods ``M::name``: methods of a generic parameter ``M``, the name ``M``'s own impl
    gives its methods. They are named for the reference, as when the type's own impl is beside it."""
    got = extract("src/lib.rs", '''\
        pub trait Trait {
            fn name(&self) -> u8;
        }

        impl<M: Trait> Trait for &M {
            fn name(&self) -> u8 { (**self).name() }
        }

        impl<R: Read + ?Sized> Read for &mut R {
            fn read(&mut self) -> usize { 0 }
        }
        ''')
    assert got == [
        ("Trait", "trait", 1, 3),
        ("Trait::name", "method", 2, 2),
        ("impl Trait for &M", "impl", 5, 7),
        ("<&M as Trait>::name", "method", 6, 6),
        ("impl Read for &mut R", "impl", 9, 11),
        ("<&mut R as Read>::read", "method", 10, 10),
    ]

def test_java_nesting_constructors_and_overloads():
    got = extract("src/main/java/app/Outer.java", '''\
        package app;

        import java.util.List;

        @Deprecated
        public class Outer {
            private int count;

            public Outer(int count) { this.count = count; }

            void bar(int x) {}

            void bar(String s, List<String>... rest) {}

            static class Inner {
                void method() {}
            }

            interface Listener {
                void onEvent();
                default void reset() {}
            }
        }
        ''')
    assert got == [
        ("Outer", "class", 5, 23),
        ("Outer.Outer", "constructor", 9, 9),
        ("Outer.bar(int)", "method", 11, 11),
        ("Outer.bar(String,List<String>...)", "method", 13, 13),
        ("Outer.Inner", "class", 15, 17),
        ("Outer.Inner.method", "method", 16, 16),
        ("Outer.Listener", "interface", 19, 22),
        ("Outer.Listener.onEvent", "method", 20, 20),
        ("Outer.Listener.reset", "method", 21, 21),
    ]


def test_c_functions_structs_typedefs_and_macros():
    got = extract("src/store.c", '''\
        #include <stdlib.h>

        #define MAX(a, b) ((a) > (b) ? (a) : (b))

        struct store {
            int size;
        };

        typedef struct {
            int x, y;
        } point;

        static int *make(int **a, char c[]) {
            return NULL;
        }

        void store_free(struct store *s) { free(s); }
        ''')
    assert got == [
        ("MAX", "macro", 3, 3),
        ("store", "struct", 5, 7),
        ("point", "struct", 9, 11),
        ("make", "function", 13, 15),
        ("store_free", "function", 17, 17),
    ]


def test_cpp_namespaces_out_of_line_methods_and_overloads():
    got = extract("src/server.cpp", '''\
        #include <string>

        namespace net {

        template <typename T>
        class Server {
         public:
          Server(int port) : port_(port) {}
          ~Server() {}
          void start(const std::string& host, int port = 80) {}
          int size() const { return 0; }
          int port_;
        };

        void Server::start() {}

        }  // namespace net

        void net::Server::stop() {}

        int main() { return 0; }
        ''')
    assert got == [
        ("net", "namespace", 3, 17),
        ("net::Server", "class", 5, 13),
        ("net::Server::Server", "constructor", 8, 8),
        ("net::Server::~Server", "method", 9, 9),
        ("net::Server::start(const std::string&,int)", "method", 10, 10),
        ("net::Server::size", "method", 11, 11),
        ("net::Server::start()", "method", 15, 15),
        ("net::Server::stop", "method", 19, 19),
        ("main", "function", 21, 21),
    ]


def test_cpp_functions_returning_references_are_symbols():
    # argparse's fluent setters: `Argument &nargs(...)`, a template one, `auto &append()`, an
    # out-of-line `Argument &Argument::help(...)` and a free `std::ostream &operator<<`
    got = extract("include/argparse.hpp", '''\
        class Argument {
          Argument &nargs(std::size_t n) { return *this; }
          Argument &nargs(std::size_t lo, std::size_t hi) { return *this; }
          template <typename T> Argument &default_value(T &&value) { return *this; }
          auto &append() { return *this; }
          Argument &&moved() && { return std::move(*this); }
          Argument &help(std::string text);
        };

        Argument &Argument::help(std::string text) { return *this; }

        std::ostream &operator<<(std::ostream &stream, const Argument &argument) { return stream; }
        ''')
    assert got == [
        ("Argument", "class", 1, 8),
        ("Argument::nargs(std::size_t)", "method", 2, 2),
        ("Argument::nargs(std::size_t,std::size_t)", "method", 3, 3),
        ("Argument::default_value", "method", 4, 4),
        ("Argument::append", "method", 5, 5),
        ("Argument::moved", "method", 6, 6),
        ("Argument::help", "method", 10, 10),
        ("operator<<", "function", 12, 12),
    ]


def test_cpp_conversion_operators_are_symbols():
    # argparse's `explicit operator bool() const` on ArgumentParser, and the other spellings
    got = extract("include/parser.hpp", '''\
        namespace n {
        class Parser {
         public:
          explicit operator bool() const { return true; }
          operator int() { return 1; }
          operator int() const { return 2; }
          template <class T> operator T*() { return nullptr; }
          operator const char*() const;
        };
        Parser::operator const char*() const { return ""; }
        }
        ''')
    assert got == [
        ("n", "namespace", 1, 11),
        ("n::Parser", "class", 2, 9),
        ("n::Parser::operator bool", "method", 4, 4),
        ("n::Parser::operator int()", "method", 5, 5),
        ("n::Parser::operator int() const", "method", 6, 6),
        ("n::Parser::operator T*", "method", 7, 7),
        ("n::Parser::operator const char*", "method", 10, 10),
    ]


def test_a_cpp_header_named_dot_h_is_parsed_as_cpp():
    # fmt's include/fmt/format.h: parsed as C, its struct's methods were lost and a method made
    # `auto allocate(size_t n) -> T*` by "Apply clang-tidy" was said removed
    source = '''\
        namespace detail {
        template <typename T> struct allocator : private std::decay<void> {
          using value_type = T;

          auto allocate(size_t n) -> T* {
            return static_cast<T*>(std::malloc(n * sizeof(T)));
          }
          void deallocate(T* p, size_t) { std::free(p); }
        };
        }  // namespace detail
        '''
    assert extract("include/fmt/format.h", source) == [
        ("detail", "namespace", 1, 10),
        ("detail::allocator", "struct", 2, 9),
        ("detail::allocator::allocate", "method", 5, 7),
        ("detail::allocator::deallocate", "method", 8, 8),
    ]
    old = textwrap.dedent(source).encode().replace(b"auto allocate(size_t n) -> T* {", b"T* allocate(size_t n) {")
    changes = compare("include/fmt/format.h", old, textwrap.dedent(source).encode())
    assert (changes.modified, changes.added, changes.removed) == (("detail::allocator::allocate",), (), ())


def test_a_comment_inside_a_cpp_name_is_no_part_of_it():
    # fmt's include/fmt/std.h: the specialization was named
    # `formatter<std::type_info,Char//DEPRECATED!Mixing code unit types.>`
    got = extract("include/fmt/std.hpp", '''\
        template <typename Char>
        struct formatter<std::type_info, Char  // DEPRECATED! Mixing code unit types.
                         > {
          auto format(const std::type_info& ti) const -> int { return 0; }
        };
        ''')
    assert got == [
        ("formatter<std::type_info,Char>", "struct", 1, 5),
        ("formatter<std::type_info,Char>::format", "method", 4, 4),
    ]


def test_a_c_header_stays_c():
    # extern "C" under __cplusplus and a `struct` with a body are C's too
    got = extract("include/store.h", '''\
        #ifdef __cplusplus
        extern "C" {
        #endif
        struct store { int size; };
        int store_size(const struct store *s) { return s->size; }
        #ifdef __cplusplus
        }
        #endif
        ''')
    assert got == [("store", "struct", 4, 4), ("store_size", "function", 5, 5)]
    assert language_for("include/store.h").analyze(b"int f(void) { return 0; }\n").language == "c"


def test_ruby_modules_instance_and_singleton_methods():
    got = extract("lib/billing.rb", '''\
        require "json"

        module Billing
          class Invoice < Base
            def total
              1
            end

            def self.build(attrs)
              new(attrs)
            end

            class << self
              def parse(text); end
            end
          end
        end

        def helper; end
        ''')
    assert got == [
        ("Billing", "module", 3, 17),
        ("Billing::Invoice", "class", 4, 16),
        ("Billing::Invoice#total", "method", 5, 7),
        ("Billing::Invoice.build", "method", 9, 11),
        ("Billing::Invoice.parse", "method", 14, 14),
        ("helper", "function", 19, 19),
    ]


def test_ruby_methods_of_class_self_under_a_condition_or_private_are_singleton_methods():
    """``private def`` and a ``def`` under ``if`` in ``class << self`` were named as instance methods (``Cache#load``,
    ``Cache#clock``): they are the class's own (``Cache.load``), as ``def self.load`` would be; a block or a nested
    class inside ``class << self`` is a scope of its own."""
    got = extract("lib/cache.rb", '''\
        class Cache
          class << self
            private def load(key); end
            if defined?(Process::CLOCK_MONOTONIC)
              def clock; end
            end
            class Entry
              def size; end
            end
          end

          private def evict; end
        end
        ''')
    assert got == [
        ("Cache", "class", 1, 13),
        ("Cache.load", "method", 3, 3),
        ("Cache.clock", "method", 5, 5),
        ("Cache::Entry", "class", 7, 9),
        ("Cache::Entry#size", "method", 8, 8),
        ("Cache#evict", "method", 12, 12),
    ]


def test_ruby_a_def_on_the_name_of_its_own_class_is_its_singleton_method():
    """``def Invoice.build`` in ``class Invoice`` of ``module Billing`` was ``Invoice.build``, a name of its own beside
    ``Billing::Invoice.build``: RuboCop's Style/ClassMethods turning it into ``def self.build`` read as one method
    removed and another added. A receiver naming another object keeps its name."""
    source = """\
        module Billing
          class Invoice
            def Invoice.build(attrs)
              new(attrs)
            end

            def Billing.helper; end
          end
        end
        """
    got = extract("lib/billing.rb", source)
    assert [name for name, *_ in got] == [
        "Billing", "Billing::Invoice", "Billing::Invoice.build", "Billing.helper"]
    old = textwrap.dedent(source).encode()
    changes = compare("lib/billing.rb", old, old.replace(b"def Invoice.build", b"def self.build"))
    assert changes is not None and (changes.added, changes.removed) == ((), ()), changes.summary()
    assert changes.modified == ("Billing::Invoice.build",)


def test_ruby_classes_made_by_struct_class_and_data_with_a_block_are_classes():
    """``Point = Struct.new(:x) do def dist ... end end`` inside ``module Geo``: ``dist`` was named ``Geo#dist``, an
    instance method of the module (and would clash with a ``def dist`` of the module's own)."""
    got = extract("lib/geo.rb", '''\
        module Geo
          Point = Struct.new(:x, :y) do
            def dist; end
          end
          Shape = Class.new(Base) { def area; end }
          Size = Data.define(:w) do
            def self.zero; end
          end
          HANDLER = proc do
            def nope; end
          end
          Plain = Struct.new(:a)
        end
        ''')
    assert got == [
        ("Geo", "module", 1, 13),
        ("Geo::Point", "class", 2, 4),
        ("Geo::Point#dist", "method", 3, 3),
        ("Geo::Shape", "class", 5, 5),
        ("Geo::Shape#area", "method", 5, 5),
        ("Geo::Size", "class", 6, 8),
        ("Geo::Size.zero", "method", 7, 7),
        ("Geo#nope", "method", 10, 10),
    ]


@pytest.mark.parametrize("path, name", [
    ("a.py", "python"), ("b.JS", "javascript"), ("c.cjs", "javascript"), ("d.jsx", "javascript"),
    ("e.ts", "typescript"), ("f.tsx", "tsx"), ("g.go", "go"), ("h.rs", "rust"), ("I.java", "java"),
    ("j.c", "c"), ("k.h", "c"), ("l.cc", "cpp"), ("m.hpp", "cpp"), ("n.rb", "ruby"), ("sub/Rakefile", "ruby"),
])
def test_registry_maps_extensions_and_file_names(path, name):
    language = language_for(path)
    assert language is not None and language.name == name
    assert language_for(path) is language  # one shared instance


@pytest.mark.parametrize("path", ["README.md", "Makefile", "data.json", "noext", "archive.tar.gz"])
def test_registry_returns_none_for_unsupported_files(path):
    assert language_for(path) is None


def test_extensions_declared_by_modules_match_the_registry():
    from code_trajectory.symbols import supported_extensions

    for ext in supported_extensions():
        language = language_for("x" + ext)
        assert language is not None and ext in language.extensions, ext


def test_crlf_line_endings_give_the_same_lines():
    source = "class A:\n    def f(self):\n        return 1\n\ndef g():\n    pass\n"
    lf = extract("a.py", source)
    crlf = [(s.name, s.kind, s.start_line, s.end_line)
            for s in language_for("a.py").extract(source.replace("\n", "\r\n").encode())]
    assert crlf == lf == [("A", "class", 1, 3), ("A.f", "method", 2, 3), ("g", "function", 5, 6)]


def test_syntax_errors_still_yield_the_recognisable_definitions():
    language = language_for("broken.py")
    analysis = language.analyze(b"def good():\n    return 1\n\ndef broken(:\n    pass\n\nclass Still:\n    def ok(self):\n"
                                b"        return 2\n")
    names = [s.name for s in analysis.symbols]
    assert analysis.has_errors
    assert "good" in names and "Still" in names and "Still.ok" in names


def test_binary_and_too_large_input_are_skipped_not_parsed():
    from code_trajectory.symbols import MAX_SOURCE_BYTES

    language = language_for("a.c")
    binary = language.analyze(b"int main() {}\x00\x01\x02")
    assert binary.skipped == "binary" and binary.symbols == ()
    huge = language.analyze(b"int f(void) { return 0; }\n" * (MAX_SOURCE_BYTES // 26 + 1))
    assert huge.skipped == "too-large" and huge.symbols == ()
    assert language.extract(b"\xff\xfe garbage \x80 not utf-8") == []


def test_non_utf8_names_are_decoded_with_replacement():
    symbols = language_for("a.py").extract("def caf\u00e9():\n    pass\n".encode("latin-1"))
    assert len(symbols) == 1 and symbols[0].name.startswith("caf")


def test_csharp_namespaces_properties_and_overloads():
    got = extract("Store.cs", '''\
        using System;
        namespace App.Core {
          public class Store<T> {
            public Store(int x) {}
            public void Save(int a) {}
            public void Save(string s, int b) {}
            public int Size { get { return 1; } }
            interface IRepo { void Load(); }
          }
        }
        ''')
    assert got == [
        ("App.Core", "namespace", 2, 10),
        ("App.Core.Store<>", "class", 3, 9),
        ("App.Core.Store<>.Store", "constructor", 4, 4),
        ("App.Core.Store<>.Save(int)", "method", 5, 5),
        ("App.Core.Store<>.Save(string,int)", "method", 6, 6),
        ("App.Core.Store<>.Size", "property", 7, 7),
        ("App.Core.Store<>.IRepo", "interface", 8, 8),
        ("App.Core.Store<>.IRepo.Load", "method", 8, 8),
    ]


def test_csharp_operators_indexers_events_finalizers_delegates_and_expression_bodied_properties():
    got = extract("Unit.cs", '''\
        namespace App;
        public delegate Task<T> Next<T>();
        public struct Unit {
          public static Unit Value => _value;
          public int Auto { get; set; } = 3;
          public static bool operator ==(Unit a, Unit b) => true;
          public static implicit operator int(Unit u) { return 0; }
          public int this[int i] => i;
          public int this[string s] { get { return 1; } }
          public event EventHandler Changed { add { } remove { } }
          ~Unit() { }
        }
        ''')
    assert got == [
        ("App", "namespace", 1, 1),
        ("Next<>", "type", 2, 2),
        ("Unit", "struct", 3, 12),
        ("Unit.Value", "property", 4, 4),
        ("Unit.operator==", "method", 6, 6),
        ("Unit.operator int", "method", 7, 7),
        ("Unit.this(int)", "property", 8, 8),
        ("Unit.this(string)", "property", 9, 9),
        ("Unit.Changed", "property", 10, 10),
        ("Unit.~Unit", "method", 11, 11),
    ]


def test_php_classes_traits_and_braced_namespaces():
    got = extract("src/User.php", '''\
        <?php
        use Foo\\Bar;
        function helper($a) { return $a; }
        class User extends Model {
            public function save(): bool { return true; }
            public static function find($id) {}
        }
        trait Greets { public function hi() {} }
        namespace Other { class K { function m() {} } }
        ''')
    assert got == [
        ("helper", "function", 3, 3),
        ("User", "class", 4, 7),
        ("User::save", "method", 5, 5),
        ("User::find", "method", 6, 6),
        ("Greets", "trait", 8, 8),
        ("Greets::hi", "method", 8, 8),
        ("Other", "namespace", 9, 9),
        ("Other\\K", "class", 9, 9),
        ("Other\\K::m", "method", 9, 9),
    ]


def test_ruby_two_definitions_of_one_name_in_an_added_class_are_said_once_with_a_count():
    """rack's spec_request.rb became ``class RackRequestTest`` with two ``def initialize`` (in two helper classes'
    bodies): the log said ``added RackRequestTest (#initialize, #initialize, #ip_app)``."""
    source = b"class RackRequestTest\n  def initialize; end\n  def ip_app; end\n  def initialize; end\nend\n"
    changes = compare("test/spec_request.rb", b"", source)
    assert changes is not None
    for lean in (True, False):
        said = describe_symbols(changes, lean=lean)
        assert "RackRequestTest (#initialize ×2, #ip_app)" in said, said


def test_ruby_methods_moved_into_a_nested_module_and_changed_are_renamed_there():
    """rack's "Move most methods on the Rack::Request to a module": ``Request#ip`` became ``Request::Helpers#ip`` with
    ``@env['REMOTE_ADDR']`` now ``get_header('REMOTE_ADDR')``; it was said removed and added, and the symbol history
    of ``Helpers#ip`` began there, its earlier versions lost. The one removed and the one added of a kind with one
    short name, alike, is a rename, as for a rename with a changed body."""
    old = textwrap.dedent("""\
        module Rack
          class Request
            def ip
              remote_addrs = split_ip_addresses(@env['REMOTE_ADDR'])
              remote_addrs = reject_trusted_ip_addresses(remote_addrs)
              return remote_addrs.first if remote_addrs.any?
              forwarded_ips = split_ip_addresses(@env['HTTP_X_FORWARDED_FOR'])
              return reject_trusted_ip_addresses(forwarded_ips).last || remote_addrs.last
            end

            def xhr?
              @env["HTTP_X_REQUESTED_WITH"] == "XMLHttpRequest"
              # or not
            end
          end
        end
        """).encode()
    new = textwrap.dedent("""\
        module Rack
          class Request
            module Helpers
              def ip
                remote_addrs = split_ip_addresses(get_header('REMOTE_ADDR'))
                remote_addrs = reject_trusted_ip_addresses(remote_addrs)
                return remote_addrs.first if remote_addrs.any?
                forwarded_ips = split_ip_addresses(get_header('HTTP_X_FORWARDED_FOR'))
                return reject_trusted_ip_addresses(forwarded_ips).last || remote_addrs.last
              end

              def xhr?
                get_header("HTTP_X_REQUESTED_WITH") == "XMLHttpRequest"
                # or not
              end
            end
          end
        end
        """).encode()
    changes = compare("lib/rack/request.rb", old, new)
    assert changes is not None
    assert changes.renamed == (("Rack::Request#ip", "Rack::Request::Helpers#ip"),
                               ("Rack::Request#xhr?", "Rack::Request::Helpers#xhr?")), changes.summary()
    assert changes.added == ("Rack::Request::Helpers",) and changes.removed == (), changes.summary()
