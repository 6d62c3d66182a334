"""A cheap test that a short text holds nothing the secret rules could match, so redacting it needs no RE2.

:func:`code_trajectory.core.secrets.redact` compiles every rule into one RE2 program on its first call: importing
``re2`` and compiling cost 15-30 ms, more than a whole ``hook prompt`` may spend (issue 29). Most intents and
prompts hold no secret, and most hold none of what every rule needs: this module answers, in pure Python (``str``
and ``bytes`` methods, linear in the text), whether the text has at least one *necessary part* of some rule. When it
has none, no rule can match and the text is returned as it is; when it has one, the text is redacted as always.

The test is sound by construction, per rule of :data:`~code_trajectory.core.secrets.OWN_RULES` and
:data:`~code_trajectory.core.secret_rules_upstream.RULES` (the comments name them): every match of a rule contains
one of the parts listed for it, and each part is a substring or a run of characters, so a text containing a match
contains the part too. ``tests/core/test_secret_prefilter.py`` checks it against strings generated from every rule's
pattern (Hypothesis) and against RE2 itself; a new rule the parts below miss fails that test.

Case-insensitive rules (``(?i:...)``) are compared on :meth:`str.casefold`, which maps the two non-ASCII letters
RE2 folds onto ASCII ones (KELVIN SIGN to ``k``, LONG S to ``s``) as RE2 does.
"""

from __future__ import annotations

#: Substrings of the case-folded text that make it a candidate on their own.
_FOLDED = (
    "password", "passwd", "pwd", "passphrase",  # credential assignment, password in prose, passphrase
    "authorization", "bearer",  # authorization header, bearer token (RFC 9110, RFC 6750)
    "putty",  # PuTTY key files (own rule and PrivateKeyDetector)
    "xox", "xapp",  # Slack tokens (own rules and SlackDetector, which is case-insensitive)
    "aws",  # AWSKeyDetector's ``aws ... key = '...'``
    "hooks.slack.com", "softlayer", "cloudant",  # SlackDetector's webhook, SoftlayerDetector, CloudantDetector
)
#: Keywords of the credential assignment (``secret: ...``, ``api_key=...``, ``AccountKey=...``, npm's
#: ``_authToken=...``): a candidate only with an assignment sign (``:`` or ``=``) somewhere in the text.
_FOLDED_ASSIGNED = ("secret", "token", "key", "credential")
#: Case-sensitive substrings that make the text a candidate on their own (token prefixes).
_EXACT = (
    "BEGIN",  # private key blocks (own rule and PrivateKeyDetector)
    "eyJ",  # JSON Web Tokens
    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",  # GitHub
    "glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-", "glffct-",
    "glwt-", "GR1348941",  # GitLab
    "npm_", "hf_", "AIza", "k_live_", "k_test_", "sk-",  # npm, Hugging Face, Google, Stripe, Anthropic/OpenAI
    "A3T", "AKIA", "ASIA", "ABIA", "ACCA",  # AWS access key ids (own rule and AWSKeyDetector)
    "AKC",  # ArtifactoryDetector
    "pypi-", "SG.", "sq0csp-",  # PypiTokenDetector, SendGridDetector, SquareOAuthDetector
)
#: A run of this many ``[A-Za-z0-9_-]`` characters: DiscordBotTokenDetector (24), MailchimpDetector (32),
#: TwilioKeyDetector (34), TelegramBotTokenDetector (35) and every long token.
_WORD_RUN = 24
#: ArtifactoryDetector's ``AP[0-9A-F][a-zA-Z0-9]{8,}``: ``AP`` and a run of this many ``[A-Za-z0-9]``.
_ALNUM_RUN = 11

_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#: ``bytes.translate`` tables: the class's ASCII characters become ``a``, every other byte a space.
_WORD_TABLE = bytes(ord("a") if c in _ALNUM + b"_-" else ord(" ") for c in range(256))
_ALNUM_TABLE = bytes(ord("a") if c in _ALNUM else ord(" ") for c in range(256))


def might_hold_secret(text: str) -> bool:
    """False when no rule of :mod:`code_trajectory.core.secrets` can match anywhere in ``text`` (then redacting it
    changes nothing); True when one might (then it must be redacted). Linear in ``len(text)``.

    Args:
        text: any text (lone surrogates allowed).
    """
    if any(part in text for part in _EXACT) or "://" in text and "@" in text:  # BasicAuthDetector, Cloudant
        return True
    folded = text.casefold()
    if any(part in folded for part in _FOLDED):
        return True
    if (":" in text or "=" in text) and any(part in folded for part in _FOLDED_ASSIGNED):
        return True
    data = text.encode("ascii", "replace")  # the runs' classes are ASCII: any other character ends a run
    if b"a" * _WORD_RUN in data.translate(_WORD_TABLE):
        return True
    return "AP" in text and b"a" * _ALNUM_RUN in data.translate(_ALNUM_TABLE)
