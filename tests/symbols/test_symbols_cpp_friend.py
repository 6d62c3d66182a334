"""C++ ``friend`` functions defined in a class (fmt's ``uint128``): the ``friend`` is the function's, not its
class's."""

from __future__ import annotations

from code_trajectory.symbols import compare, language_for

#: fmt's fallback uint128 of include/fmt/format.h, before "Fix fallback uint128 bitwise not (#4813)".
UINT128 = b'''class uint128 {
 private:
  uint64_t lo_, hi_;

 public:
  friend FMT_CONSTEXPR auto operator&(const uint128& lhs, const uint128& rhs)
      -> uint128 {
    return {lhs.hi_ & rhs.hi_, lhs.lo_ & rhs.lo_};
  }
};
'''

NOT = b'''  friend constexpr auto operator~(const uint128& n) -> uint128 {
    return {~n.hi_, ~n.lo_};
  }
'''


def test_adding_a_friend_function_adds_it_and_modifies_not_its_class() -> None:
    """#4813 added ``operator~`` as a friend: the file history said "modified uint128" beside "added
    uint128::operator~", the word ``friend`` counted as the class's own code."""
    new = UINT128.replace(b"\n};\n", b"\n" + NOT + b"};\n")
    changes = compare("include/fmt/format.h", UINT128, new)
    assert (changes.added, changes.modified) == (("uint128::operator~",), ())


def test_a_friend_function_spans_its_friend_keyword() -> None:
    spans = [(s.name, s.start_line, s.end_line) for s in language_for("format.h").analyze(UINT128).symbols]
    assert spans == [("uint128", 1, 10), ("uint128::operator&", 6, 9)]
    dropped = UINT128.replace(b"  friend FMT_CONSTEXPR auto", b"  FMT_CONSTEXPR auto")
    assert compare("include/fmt/format.h", UINT128, dropped).modified == ("uint128::operator&",)


#: fmt's detail::allocator before "Minor cleanup": a macro before ``friend``.
ALLOCATOR = b'''template <typename T> struct allocator {
  void deallocate(T* p, size_t) { std::free(p); }

  FMT_CONSTEXPR20 friend bool operator==(allocator, allocator) noexcept {
    return true;
  }
};
'''


def test_a_macro_before_friend_is_the_function_s() -> None:
    """tree-sitter reads ``FMT_CONSTEXPR20 friend`` as a field declaration missing its ``;``, then the function:
    "Minor cleanup" (``constexpr friend auto operator==(...) -> bool``) was told as ``allocator`` modified too."""
    spans = [(s.name, s.start_line, s.end_line) for s in language_for("format.h").analyze(ALLOCATOR).symbols]
    assert spans[2] == ("allocator::operator==", 4, 6)
    new = ALLOCATOR.replace(b"  FMT_CONSTEXPR20 friend bool operator==(allocator, allocator) noexcept {",
                            b"  constexpr friend auto operator==(allocator, allocator) noexcept -> bool {")
    assert compare("include/fmt/format.h", ALLOCATOR, new).modified == ("allocator::operator==",)
