"""C++ in macro-heavy code (fmt's ``include/fmt/format.h``, Chromium's ``base/``): what tree-sitter-cpp misreads is
blanked in the text it parses (conditions of ``#if`` lines, upper-case macros where a declaration is expected),
and the symbols keep their names and spans."""

from __future__ import annotations

from code_trajectory.symbols import compare, language_for

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


#: A Chromium-style header (base/): export macros before and inside declarations, build flags in conditions.
CHROMIUM = b'''// Copyright 2024 The Chromium Authors
#ifndef BASE_FILES_FILE_PATH_WATCHER_H_
#define BASE_FILES_FILE_PATH_WATCHER_H_

#include "base/base_export.h"
#include "build/build_config.h"

#if BUILDFLAG(IS_WIN)
#include <windows.h>
#endif

namespace base {

class BASE_EXPORT FilePathWatcher : public Watcher {
 public:
  FilePathWatcher();
  ~FilePathWatcher() override;

  bool Watch(const FilePath& path) {
    return path_ == path;
  }

 private:
  FilePath path_;
  DISALLOW_COPY_AND_ASSIGN(FilePathWatcher);
};

class COMPONENT_EXPORT(NETWORK_CPP) ResourceRequest {
 public:
  ALWAYS_INLINE int priority() const { return priority_; }

 private:
  int priority_;
};

BASE_EXPORT bool IsValid(const std::string& name) {
  return !name.empty();
}

#if BUILDFLAG(IS_WIN) && !defined(ARCH_CPU_X86)
NOINLINE void Crash() {
  *static_cast<volatile int*>(nullptr) = 0;
}
#elif BUILDFLAG(IS_POSIX) || BUILDFLAG(IS_FUCHSIA)
void Crash() {}
#endif

}  // namespace base

#endif  // BASE_FILES_FILE_PATH_WATCHER_H_
'''


def test_export_macros_leave_classes_and_members_named() -> None:
    """``class BASE_EXPORT FilePathWatcher`` and ``class COMPONENT_EXPORT(NETWORK_CPP) ResourceRequest`` were
    errors: the classes were lost and ``Watch`` was ``base::Watch``, a function of the namespace."""
    assert symbols(CHROMIUM, "base/files/file_path_watcher.h") == [
        ("base", "namespace", 12, 48),
        ("base::FilePathWatcher", "class", 14, 26),
        ("base::FilePathWatcher::Watch", "method", 19, 21),
        ("base::ResourceRequest", "class", 28, 34),
        ("base::ResourceRequest::priority", "method", 30, 30),
        ("base::IsValid", "function", 36, 38),
        ("base::Crash()", "function", 41, 43),
        ("base::Crash()@2", "function", 45, 45),
    ]


#: fmt's format.h (2024), the three constructs that together put most of the file in one error (bisected: with any
#: two of them read right, the third still does): a macro before a constructor with an initializer list, then a
#: macro alone on its line (``FMT_BEGIN_EXPORT``), after a ``#if`` in a template header.
SIZE_PADDING = b'''namespace detail {
struct size_padding {
  unsigned size;

  FMT_CONSTEXPR size_padding(int num_digits, unsigned prefix)
      : size((prefix >> 24) + to_unsigned(num_digits)) {
    if (num_digits > 0) size = 1;
  }
};

template <typename Char, typename OutputIt, typename T>
FMT_CONSTEXPR FMT_INLINE auto write_int(OutputIt out, T value) -> OutputIt {
  return out;
}
}  // namespace detail

FMT_BEGIN_EXPORT

template <typename T, size_t SIZE = inline_buffer_size>
class basic_memory_buffer : public detail::buffer<T> {
 private:
  FMT_NO_UNIQUE_ADDRESS Allocator alloc_;

  static FMT_CONSTEXPR20 void grow(detail::buffer<T>& buf, size_t size) {
    buf.set(nullptr, size);
  }

 public:
  FMT_CONSTEXPR20 ~basic_memory_buffer() { deallocate(); }
};
FMT_END_EXPORT
'''


def test_macros_before_declarations_name_nothing() -> None:
    """``FMT_CONSTEXPR size_padding(...) : size(...)`` was a function ``FMT_CONSTEXPR`` could not end: the struct
    took in the functions after it (``size_padding::write_int``), and ``FMT_BEGIN_EXPORT`` made the class's
    methods ``operator=::basic_memory_buffer::grow`` in the whole file."""
    assert symbols(SIZE_PADDING) == [
        ("detail", "namespace", 1, 15),
        ("detail::size_padding", "struct", 2, 9),
        ("detail::size_padding::size_padding", "constructor", 5, 8),
        ("detail::write_int", "function", 11, 14),
        ("basic_memory_buffer", "class", 19, 30),
        ("basic_memory_buffer::grow", "method", 24, 26),
        ("basic_memory_buffer::~basic_memory_buffer", "method", 29, 29),
    ]


def test_a_macro_before_a_function_is_its_text() -> None:
    """Dropping a macro before a member changes the member, not its class (the macro is in the member's span)."""
    new = SIZE_PADDING.replace(b"  FMT_CONSTEXPR20 ~basic_memory_buffer()", b"  ~basic_memory_buffer()")
    changes = compare("include/fmt/format.h", SIZE_PADDING, new)
    assert (changes.modified, changes.added, changes.removed) == (("basic_memory_buffer::~basic_memory_buffer",), (), ())


def test_a_macro_call_in_a_statement_or_a_test_is_kept() -> None:
    """A macro followed by ``;``, an operator or a definition's body is not blanked into something else: gtest's
    ``TEST(Suite, Name)`` with its body on the next line stays a definition, ``CHECK(x) << ...`` an expression."""
    source = b"TEST(Suite, Name)\n{\n  CHECK(x) << \"m\";\n  X = Y;\n}\n"
    assert language_for("a_test.cc").parsed_text(source) == source


def test_long_macro_lines_are_read_in_one_pass() -> None:
    """A hostile file: a line of 150,000 macros, one call with an argument of 300,000 characters, a template header
    with 300,000 characters of arguments (no timing: a pattern that backtracks would not finish)."""
    source = (b"A_ " * 150_000 + b"\nFOO(" + b"x" * 300_000 + b"\nclass B_ " + b"C_(" * 100_000
              + b"\ntemplate <T, BAR(" + b"(x" * 150_000 + b">\nint f() { return 1; }\n")
    parsed = language_for("src/format.cc").parsed_text(source)
    assert len(parsed) == len(source) and parsed.count(b"\n") == source.count(b"\n")
    assert parsed.startswith(b" " * 450_000 + b"\nFOO(xxx") and parsed.endswith(b">\nint f() { return 1; }\n")


def test_a_name_starting_in_capitals_is_no_macro() -> None:
    """leveldb's ``class DBImpl : public DB`` was read as the macro ``DBI`` before a class ``mpl``; a type first on
    its line (``DBImpl* impl = ...``, ``HANDLE h;``) is no macro either."""
    source = b"class DBImpl : public DB {\n  DBImpl* self;\n  HANDLE handle;\n  void Get() {}\n};\n"
    assert language_for("db/db_impl.cc").parsed_text(source) == source
    assert symbols(source, "db/db_impl.cc") == [("DBImpl", "class", 1, 5), ("DBImpl::Get", "method", 4, 4)]


def test_a_type_named_in_capitals_after_an_export_macro_keeps_its_name() -> None:
    """leveldb's ``class LEVELDB_EXPORT DB {`` was left as written (two upper-case words, then ``{``), an error:
    ``DB()`` and ``DB(const DB&)`` became functions of the namespace."""
    source = b"class LEVELDB_EXPORT DB {\n public:\n  DB() = default;\n  virtual ~DB();\n  void Get() {}\n};\n"
    source += b"class FOO {\n  void Put() {}\n};\nclass A_EXPORT B_C : public X {\n};\n"
    assert symbols(source, "db/db.cc") == [("DB", "class", 1, 6), ("DB::DB", "constructor", 3, 3),
                                           ("DB::Get", "method", 5, 5),
                                           ("FOO", "class", 7, 9), ("FOO::Put", "method", 8, 8),
                                           ("B_C", "class", 10, 11)]


def test_the_body_of_a_define_is_left_as_written() -> None:
    """leveldb's ``#define EXPECT_LEVELDB_OK(e) \\`` then ``EXPECT_TRUE(IsOK(e))``: a blanked continuation line made
    the next ``#define`` part of the first (one macro ``EXPECT_LEVELDB_OK`` over both)."""
    source = b"#define EXPECT_OK(e) \\\n  EXPECT_TRUE(IsOK(e))\n#define ASSERT_OK(e) \\\r\n  ASSERT_TRUE(IsOK(e))\n"
    assert language_for("util/testutil.cc").parsed_text(source) == source


#: leveldb's port/port_stdcxx.h and util/mutexlock.h: thread-safety annotations after the parameter lists.
MUTEX = b'''class LOCKABLE Mutex {
 public:
  void Lock() EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void AssertHeld() const ASSERT_EXCLUSIVE_LOCK() {}
};

class SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(port::Mutex* mu) EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    this->mu_->Lock();
  }
  void Wait() EXCLUSIVE_LOCKS_REQUIRED(lock_);
  int count_ GUARDED_BY(lock_);
  void DeleteFileInternal(const std::string& fname)
      EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    count_ = 0;
  }
};
'''


def test_annotations_after_a_parameter_list_are_no_names() -> None:
    """``void Lock() EXCLUSIVE_LOCK_FUNCTION() { ... }`` was a method ``Mutex::EXCLUSIVE_LOCK_FUNCTION``."""
    assert symbols(MUTEX, "port/port_stdcxx.cc") == [
        ("Mutex", "class", 1, 5),
        ("Mutex::Lock", "method", 3, 3),
        ("Mutex::AssertHeld", "method", 4, 4),
        ("MutexLock", "class", 7, 18),
        ("MutexLock::MutexLock", "constructor", 9, 11),
        ("MutexLock::DeleteFileInternal", "method", 14, 17),
    ]


#: fmt's format-inl.h (2024): ``try``/``catch`` spelled with macros (``-fno-exceptions`` builds).
SYSTEM_ERROR = b'''FMT_FUNC void format_system_error(detail::buffer<char>& out, int error_code,
                                  const char* message) noexcept {
  FMT_TRY {
    auto ec = std::error_code(error_code, std::generic_category());
    detail::write(appender(out), std::system_error(ec, message).what());
    return;
  }
  FMT_CATCH(...) {}
  format_error_code(out, error_code, message);
}

FMT_FUNC void report_system_error(int error_code, const char* message) noexcept {
  do_report_error(format_system_error, error_code, message);
}
'''


def test_try_and_catch_macros_are_statements_of_their_function() -> None:
    """``FMT_TRY {`` ended ``format_system_error`` at its block's ``}`` and ``FMT_CATCH(...) {}`` was a function
    ``FMT_CATCH``; a macro call before a block inside a body is the body's statement, not a definition."""
    assert symbols(SYSTEM_ERROR, "src/format.cc") == [
        ("format_system_error", "function", 1, 10),
        ("report_system_error", "function", 12, 14),
    ]
    new = SYSTEM_ERROR.replace(b"FMT_CATCH(...) {}", b"FMT_CATCH(...) { format_error_code(out, 0, message); }")
    assert compare("src/format.cc", SYSTEM_ERROR, new).modified == ("format_system_error",)
