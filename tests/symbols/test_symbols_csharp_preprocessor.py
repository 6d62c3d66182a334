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
