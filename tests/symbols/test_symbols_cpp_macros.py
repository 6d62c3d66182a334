"""C++ definitions after an object-like macro on its own line (fmt's ``FMT_BEGIN_NAMESPACE``): tree-sitter reads
``MACRO namespace NAME {`` as a function whose type is the macro, and the namespace was lost."""

from __future__ import annotations

import textwrap

from code_trajectory.symbols import compare, language_for

#: fmt's include/fmt/format-inl.h before "Add FMT_CUSTOM_ASSERT_FAIL (#4505)": the macro right above the namespace.
INL = '''\
    FMT_BEGIN_NAMESPACE
    namespace detail {

    // A wrapper around fwrite that throws on error.
    inline void fwrite_all(const void* ptr, size_t count, FILE* stream) {
      size_t written = std::fwrite(ptr, 1, count, stream);
    }

    template <typename Locale> auto locale_ref::get() const -> Locale {
      return locale();
    }
    }  // namespace detail
    FMT_END_NAMESPACE
    '''


def symbols(source: str) -> list[tuple[str, str, int, int]]:
    """``(name, kind, first line, last line)`` of each symbol of ``source`` (dedented) read as a C++ header."""
    analysis = language_for("include/fmt/format-inl.h").analyze(textwrap.dedent(source).encode())
    return [(s.name, s.kind, s.start_line, s.end_line) for s in analysis.symbols]


def test_a_namespace_right_after_a_macro_line_is_a_namespace() -> None:
    assert symbols(INL) == [
        ("detail", "namespace", 2, 12),
        ("detail::fwrite_all", "function", 5, 7),
        ("detail::locale_ref::get", "method", 9, 11),
    ]


def test_a_blank_line_between_the_macro_and_the_namespace_renames_nothing() -> None:
    """fmt's "Add FMT_CUSTOM_ASSERT_FAIL (#4505)" put lines between ``FMT_BEGIN_NAMESPACE`` and
    ``namespace detail {``: every function of the namespace was said renamed (``fwrite_all -> detail::fwrite_all``,
    ``locale_ref::get -> detail::locale_ref::get``, 11 in all) and its comments removed."""
    old = textwrap.dedent(INL).encode()
    new = old.replace(b"FMT_BEGIN_NAMESPACE\n", b"FMT_BEGIN_NAMESPACE\n\n#ifndef FMT_CUSTOM_ASSERT_FAIL\n#endif\n")
    changes = compare("include/fmt/format-inl.h", old, new)
    assert (changes.added, changes.removed, changes.renamed) == ((), (), ())


#: fmt's format-inl.h before "Apply clang-tidy": a macro before the return type (``FMT_INLINE decimal_fp<T>``).
DRAGONBOX = '''\
    namespace dragonbox {
    template <typename T>
    FMT_INLINE decimal_fp<T> shorter_interval_case(int exponent) noexcept {
      decimal_fp<T> ret_value;
      return ret_value;
    }
    }  // namespace dragonbox
    '''


def test_a_return_type_after_a_macro_is_no_part_of_the_name() -> None:
    """tree-sitter reads ``MACRO decimal_fp<T> name(...)`` with a missing ``::`` between the return type and the
    name: the function was ``dragonbox::decimal_fp<T>shorter_interval_case``, and "Apply clang-tidy" (``FMT_INLINE
    auto shorter_interval_case(...) -> decimal_fp<T>``) said it removed and ``shorter_interval_case`` added, whose
    history then began there."""
    assert symbols(DRAGONBOX) == [
        ("dragonbox", "namespace", 1, 7),
        ("dragonbox::shorter_interval_case", "function", 2, 6),
    ]
    old = textwrap.dedent(DRAGONBOX).encode()
    new = old.replace(b"FMT_INLINE decimal_fp<T> shorter_interval_case(int exponent) noexcept {",
                      b"FMT_INLINE auto shorter_interval_case(int exponent) noexcept -> decimal_fp<T> {")
    changes = compare("include/fmt/format-inl.h", old, new)
    assert (changes.modified, changes.added, changes.removed) == (("dragonbox::shorter_interval_case",), (), ())
