"""Author ids and ref names: canonical ids, and every unsafe name a remote could send."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from code_trajectory.core.errors import ConfigError, InvalidArgumentError
from code_trajectory.share.names import (
    MAX_AUTHOR_CHARS,
    UnsafeRefError,
    check_branch_name,
    check_ref_format,
    display,
    parse_remote_ref,
    push_ref,
    sanitize_author_id,
    split_pulled_ref,
)
from code_trajectory.share.settings import ShareSettings
from support import write_user_config


@pytest.mark.parametrize("raw, expected", [
    ("alice@example.com", "alice@example.com"),
    ("Alice@Example.COM", "alice@example.com"),
    ("  bob.smith+ci@corp.example  ", "bob.smith+ci@corp.example"),
    ("Alice Laptop", "alice-laptop"),
    ("../../heads/main", "heads-main"),
    ("a..b@x", "a.b@x"),
    ("x.lock", "x"),
    (".hidden", "hidden"),
    ("-opt", "opt"),
    ("名前@example.com", "@example.com"),
    ("ａｌｉｃｅ@example.com", "alice@example.com"),  # fullwidth letters: NFKC
    ("a~b^c:d?e*f[g\\h", "a-b-c-d-e-f-g-h"),
    ("x" * 100, "x" * MAX_AUTHOR_CHARS),
])
def test_sanitize_author_id(raw: str, expected: str) -> None:
    assert sanitize_author_id(raw) == expected


@pytest.mark.parametrize("raw", ["", "   ", "@", "...", "refs", "HEAD", "Heads", "tags", "-", "\u202e"])
def test_unusable_author_ids_are_refused_with_advice(raw: str) -> None:
    with pytest.raises(InvalidArgumentError, match="author_id"):
        sanitize_author_id(raw)


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=120))
def test_sanitized_ids_are_stable_and_valid_ref_components(raw: str) -> None:
    try:
        author = sanitize_author_id(raw)
    except InvalidArgumentError:
        return
    assert sanitize_author_id(author) == author
    assert len(author) <= MAX_AUTHOR_CHARS
    assert parse_remote_ref(push_ref(author, "main")) == (author, "main")
    assert check_ref_format(push_ref(author, "main"))


@pytest.mark.parametrize("name", [
    "refs/trajectory/alice@example.com/main",
    "refs/trajectory/alice@example.com/feature/login-retry",
    "refs/trajectory/alice@example.com/fix/ünïcode",
    "refs/trajectory/alice@example.com/release-1.2",
])
def test_well_formed_names_are_accepted(name: str) -> None:
    author, branch = parse_remote_ref(name)
    assert author == "alice@example.com" and name.endswith("/" + branch)
    assert check_ref_format(name)


@pytest.mark.parametrize("name, reason", [
    ("refs/heads/main", "not under"),
    ("refs/trajectory/x@example.com/HEAD", "HEAD"),
    ("refs/trajectory/x@example.com/a/HEAD", "HEAD"),
    ("refs/trajectory/refs/heads/main", "reserved"),
    ("refs/trajectory/HEAD/main", "reserved"),
    ("refs/trajectory/x@example.com/refs/heads/main", "refs/"),
    ("refs/trajectory/x@example.com/../heads/main", "bad component"),
    ("refs/trajectory/x@example.com/a/../../b", "bad component"),
    ("refs/trajectory/x@example.com/%2e%2e/heads", "decodes"),
    ("refs/trajectory/x@example.com/%2E%2e%2fheads", "decodes"),
    ("refs/trajectory/x@example.com/a%5cb", "decodes"),
    ("refs/trajectory/x@example.com/\uff0e\uff0e/heads", "decodes"),
    ("refs/trajectory/x@example.com/a\uff0fb", "decodes"),
    ("refs/trajectory/x@example.com/a\u2024\u2024b", "decodes"),  # one-dot leaders: NFKC gives '..'
    ("refs/trajectory/x@example.com/ma\x00in", "character"),
    ("refs/trajectory/x@example.com/ma\x1bin", "character"),
    ("refs/trajectory/x@example.com/ma\nin", "character"),
    ("refs/trajectory/x@example.com/ma\u202ein", "character"),
    ("refs/trajectory/x@example.com/ma\u200bin", "character"),
    ("refs/trajectory/x@example.com/ma\udcc0\udcaein", "UTF-8"),  # overlong '.' as git would hand it over
    ("refs/trajectory/x@example.com/a b", "character"),
    ("refs/trajectory/x@example.com/a~1", "character"),
    ("refs/trajectory/x@example.com/a@{1}", "@{"),
    ("refs/trajectory/x@example.com/-rf", "'-'"),
    ("refs/trajectory/x@example.com/main.lock", "bad component"),
    ("refs/trajectory/x@example.com/.hidden", "bad component"),
    ("refs/trajectory/x@example.com/a//b", "bad component"),
    ("refs/trajectory/x@example.com/", "expected"),
    ("refs/trajectory/x@example.com", "expected"),
    ("refs/trajectory/X@example.com/main", "canonical"),
    ("refs/trajectory/x@example.com/" + "a" * 2000, "long"),
    ("refs/trajectory/x@example.com/" + "/".join(["a" * 199] * 10), "long"),
    ("refs/trajectory/x@example.com/" + "é" * 101, "bytes long"),
])
def test_unsafe_names_are_rejected_with_a_reason(name: str, reason: str) -> None:
    with pytest.raises(UnsafeRefError, match=reason if reason != "UTF-8" else "UTF-8|character"):
        parse_remote_ref(name)


def test_branch_names_are_checked_alone_too() -> None:
    check_branch_name("feature/x")
    with pytest.raises(UnsafeRefError):
        check_branch_name("HEAD")


def test_split_pulled_ref() -> None:
    assert split_pulled_ref("refs/remotes-trajectory/a@x/feature/y") == ("a@x", "feature/y")
    for bad in ("refs/heads/shadow/main", "refs/remotes-trajectory/a@x", "refs/remotes-trajectory//b"):
        with pytest.raises(ValueError):
            split_pulled_ref(bad)


def test_check_ref_format_is_gits() -> None:
    assert check_ref_format("refs/remotes-trajectory/a@x/main")
    for bad in ("refs/a/../b", "refs/a b", "-refs/a", "", "refs/a.lock", "refs/a\x7f"):
        assert not check_ref_format(bad)


def test_display_escapes_what_a_terminal_would_interpret() -> None:
    assert display("a\u202eb\x1b[31m") == "a\\u202eb\\x1b[31m"
    assert display("x" * 300, 10) == "x" * 9 + "…"


def test_settings(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".trajectory").mkdir(parents=True)
    assert ShareSettings.load(root) == ShareSettings()
    config = root / ".trajectory" / "config.toml"
    config.write_text('[share]\nauthor_id = "me"\nremote = "team"\nauto_push = true\nconsolidated = true\n')
    assert ShareSettings.load(root) == ShareSettings("me", "team", False, True)  # auto_push: the user's file only
    user = write_user_config("[share]\nauto_push = true\n")
    assert ShareSettings.load(root) == ShareSettings("me", "team", True, True)
    user.unlink()
    for text, match in (('[share]\nautopush = true\n', "unknown key"), ('[share]\nconsolidated = "yes"\n', "bool"),
                        ('[share]\nremote = " "\n', "empty")):
        config.write_text(text)
        with pytest.raises(ConfigError, match=match):
            ShareSettings.load(root)


def test_a_remote_name_is_shown_as_file_names_are_and_refused_for_what_they_escape() -> None:
    """Two definitions of invisible characters (``share/names`` and ``core/text``) spelled them two ways: a remote's
    name showed a no-break space as ``\\xa0`` and a tab as ``\\t``, a file name as ``\\u00a0`` and ``\\x09``. One
    definition now (``core.text.invisible``); what a branch name may not hold is still every control, format,
    separator, private-use or unassigned character."""
    from code_trajectory.core.text import display_path

    for name in ("a\u00a0b", "t\tb", "zw\u200bx", "l\u2028m", "evil\u202etxt"):
        assert display(name) == display_path(name), name
        with pytest.raises(UnsafeRefError):
            check_branch_name(name)
    assert display("pua\ue000 x") == "pua\\ue000 x"
    for ok in ("feature/é-日本", "fix-🐍"):
        check_branch_name(ok)
