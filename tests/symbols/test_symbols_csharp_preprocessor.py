"""C# preprocessor conditions tree-sitter-c-sharp misreads (Newtonsoft.Json's ``Linq/JToken.cs``): a condition with
parentheses and ``||`` in a class's base list ended the class at its ``{``, every member then named as the
namespace's."""

from __future__ import annotations

from code_trajectory.symbols import compare, language_for

#: JToken.cs as of 2016: an interface listed only on some platforms.
JTOKEN = b'''namespace Newtonsoft.Json.Linq
{
    public abstract partial class JToken : IJEnumerable<JToken>, IJsonLineInfo
#if !(DOTNET || PORTABLE40 || PORTABLE)
        , ICloneable
#endif
    {
        private JToken _next;

        public JToken Next
        {
            get { return _next; }
        }

        public static explicit operator bool(JToken value)
        {
#if !(NET20 || NET35)
            return Convert.ToBoolean(value);
#else
            return false;
#endif
        }
    }
}
'''


def symbols(source: bytes) -> list[tuple[str, str, int, int]]:
    """``(name, kind, first line, last line)`` of each symbol of ``source`` as a ``.cs`` file."""
    return [(s.name, s.kind, s.start_line, s.end_line) for s in language_for("Linq/JToken.cs").analyze(source).symbols]


def test_members_of_a_class_whose_base_list_has_a_condition_are_the_class_s() -> None:
    assert symbols(JTOKEN) == [
        ("Newtonsoft.Json.Linq", "namespace", 1, 24),
        ("Newtonsoft.Json.Linq.JToken", "class", 3, 23),
        ("Newtonsoft.Json.Linq.JToken.Next", "property", 10, 13),
        ("Newtonsoft.Json.Linq.JToken.operator bool", "method", 15, 22),
    ]


def test_a_changed_condition_is_a_change_of_its_symbol_and_renames_nothing() -> None:
    """Newtonsoft.Json's "Change ifdefs to be by feature, not by platform (#1146)" (``#if HAVE_ICLONEABLE``): the
    class was said modified with all its fields added, and each member renamed from the namespace's name. A
    condition is still the text of the symbol it is in: changing it inside a member changes that member."""
    new = JTOKEN.replace(b"#if !(DOTNET || PORTABLE40 || PORTABLE)", b"#if HAVE_ICLONEABLE").replace(
        b"#if !(NET20 || NET35)", b"#if HAVE_CONVERT")
    changes = compare("Linq/JToken.cs", JTOKEN, new)
    assert (changes.added, changes.removed, changes.renamed) == ((), (), ())
    assert changes.modified == ("Newtonsoft.Json.Linq.JToken", "Newtonsoft.Json.Linq.JToken.operator bool")


def test_a_condition_line_of_blanks_is_read_in_one_pass() -> None:
    """The condition was matched lazily before trailing blanks (``[^\\r\\n]*?([ \\t]*)$``): a project file with
    ``#if x`` and a long run of spaces took time quadratic in the line (40,000 spaces: 5.3 s; 300,000 would be
    minutes for one version of one file). The condition is taken to the end of the line and its blanks split off
    after; the text keeps its length and its blanks."""
    source = b"class A {\n#if x" + b" " * 300_000 + b"y \t\n int F() { return 1; }\n#endif\n}\n"
    parsed = language_for("A.cs").parsed_text(source)
    assert len(parsed) == len(source) and parsed.startswith(b"class A {\n#if X___") and b"_ \t\n int F()" in parsed
