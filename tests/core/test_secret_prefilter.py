"""Issue 29: the prefilter that spares a hook's prompt the RE2 compile never lets a secret through.

Soundness is checked against RE2 itself (the compiled rules, not ``redact``, which uses the prefilter): strings
generated from every rule's pattern that RE2 matches must be flagged, inside any surrounding text. (The documented
examples of ``test_core_secrets.py`` go through ``redact``, and so through the prefilter, too.)
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from code_trajectory.core import secrets
from code_trajectory.core.secret_prefilter import might_hold_secret
from code_trajectory.core.secret_rules_upstream import RULES

ALL_RULES = [*secrets.OWN_RULES, *RULES]


def _re2_matches(text: str) -> bool:
    return secrets._matcher(False).search(text.encode("utf-8", "surrogatepass")) is not None


def _python_pattern(pattern: str) -> re.Pattern[str]:
    """The rule as Python's ``re`` reads it (RE2's ``\\z`` is Python's ``\\Z``), ASCII classes as RE2's."""
    return re.compile(pattern.replace(r"\z", r"\Z"), re.ASCII)


@pytest.mark.parametrize(("name", "pattern"), ALL_RULES, ids=[f"{i}-{r[0]}" for i, r in enumerate(ALL_RULES)])
def test_every_match_of_every_rule_is_flagged(name: str, pattern: str) -> None:
    seen = []

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.from_regex(_python_pattern(pattern), fullmatch=True), st.text(max_size=8), st.text(max_size=8))
    def check(match: str, before: str, after: str) -> None:
        for text in (match, before + match + after):
            if _re2_matches(text):
                seen.append(text)
                assert might_hold_secret(text), (name, text)

    check()
    assert seen, f"no generated string of {name!r} matched RE2: the test checked nothing"


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_any_text_re2_matches_is_flagged(text: str) -> None:
    if _re2_matches(text):
        assert might_hold_secret(text)


def test_case_folding_as_re2_does() -> None:
    # RE2 folds KELVIN SIGN onto k and LONG S onto s in (?i:...) rules: the prefilter sees them too
    for text in ("api_\u212aey = abc", "pa\u017fsword is x", "PASSWORD=x", "Bearer abcdefghij"):
        assert _re2_matches(text), text
        assert might_hold_secret(text), text


def test_ordinary_prompts_skip_re2_and_redaction_still_works() -> None:
    for text in ("Make the parser accept tabs", "Fix the login retry in src/auth.py (issue #12)",
                 "Rename tokenize() to lex()", "Refresh when the cache is expired", "naïve café 😀",
                 "make the failing tests in tests/recording pass", "add a --verbose flag to the CLI"):
        assert not might_hold_secret(text), text
        assert secrets.redact(text) == text
    assert secrets.redact("deploy with API_KEY=sk-abc123 now") == "deploy with [redacted] now"
