"""C++ in macro-heavy code (fmt's ``include/fmt/format.h``, Chromium's ``base/``): what tree-sitter-cpp misreads is
blanked in the text it parses (conditions of ``#if`` lines, upper-case macros where a declaration is expected),
and the symbols keep their names and spans."""

from __future__ import annotations

from code_trajectory.symbols import language_for

#: fmt's ``reserve`` (format.h, 2024): a ``#if`` between a template's header and its function.
RESERVE = b'''namespace detail {
template <typename OutputIt,
          typename Enable = int>
#if FMT_CLANG_VERSION >= 307 && !FMT_ICC_VERSION
__attribute__((no_sanitize("undefined")))
#endif
inline auto reserve(OutputIt it, size_t n) -> typename OutputIt::value_type* {
  return it;
}

template <typename T> auto to_pointer(T* p, size_t n) -> T* {
  return p;
}
}  // namespace detail
'''


def symbols(source: bytes, path: str = "include/fmt/format.h") -> list[tuple[str, str, int, int]]:
    """``(name, kind, first line, last line)`` of each symbol of ``source`` read as the C++ file ``path``."""
    return [(s.name, s.kind, s.start_line, s.end_line) for s in language_for(path).analyze(source).symbols]


def test_a_condition_inside_a_template_header_leaves_the_header_to_its_function() -> None:
    """tree-sitter-cpp read ``#if A >= 307 && !B`` after ``template <...>`` as an error: ``reserve`` began at the
    attribute, its template header in no symbol."""
    assert symbols(RESERVE) == [
        ("detail", "namespace", 1, 14),
        ("detail::reserve", "function", 2, 9),
        ("detail::to_pointer", "function", 11, 13),
    ]


def test_a_condition_continued_over_lines_is_one_blank_identifier() -> None:
    """fmt's ``#if FMT_HAS_INCLUDE(<string_view>) && \\`` goes on to the next line: its first line becomes one
    identifier, the line it continues to blanks, each line break and ``\\`` kept (same length, same lines)."""
    source = (b"#if FMT_HAS_INCLUDE(<string_view>) && \\\n    (FMT_CPLUSPLUS >= 201703L || defined(X))\n"
              b"#  define FMT_USE_STRING_VIEW\n#elif \\\n  A\n#endif\n")
    parsed = language_for("src/format.cc").parsed_text(source)
    assert parsed == (b"#if X" + b"_" * 33 + b"\\\n" + b" " * 44 + b"\n"
                      b"#  define FMT_USE_STRING_VIEW\n#elif \\\n  A\n#endif\n")


def test_a_long_condition_line_is_read_in_one_pass() -> None:
    """A hostile file: a condition of 300,000 characters continued by ``\\`` (no timing: a quadratic pattern
    would not finish)."""
    source = b"#if x" + b" \\\n" * 100_000 + b"y\nint f() { return 1; }\n#endif\n"
    parsed = language_for("src/format.cc").parsed_text(source)
    assert len(parsed) == len(source) and parsed.count(b"\n") == source.count(b"\n")
    assert symbols(source, "src/format.cc") == [("f", "function", 100_002, 100_002)]
