"""Issue 21, part 4 and 5: redaction recognises the published token formats, runs in linear time, and every format
whose detect-secrets pattern RE2 rejects is still caught."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from code_trajectory.core.secret_rules_upstream import DROPPED
from code_trajectory.core.secrets import JOIN_FROM, REDACTED, redact, secret_content, url_without_credentials

ROOT = Path(__file__).resolve().parents[2]

#: (format, the secret, how it appears in a prompt); the secret must not survive redaction.
SECRETS = [
    ("GitHub fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
     "push with {} please"),
    ("GitHub classic", "ghp_" + "A1b2" * 9, "token {} here"),
    ("Bearer JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "curl -H 'Authorization: Bearer {}' https://api.example.com"),
    ("GitLab", "glpat-" + "x1Y2z3" * 4, "clone with {}"),
    ("npm", "npm_" + "a1B2" * 9, "publish using {}"),
    ("Hugging Face", "hf_" + "aBcD" * 9, "download with {}"),
    ("Google API key", "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "maps key {} ok"),
    ("Slack", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "post with {}"),
    ("Stripe", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "charge with {}"),
    ("Anthropic", "sk-ant-api03-" + "Ab1_" * 20, "call claude with {}"),
    ("OpenAI", "sk-proj-" + "Zz9-" * 12, "call with {}"),
    ("AWS secret of a pair", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "use AKIAIOSFODNN7EXAMPLE / {} for s3"),
    ("AWS access key id", "AKIAIOSFODNN7EXAMPLE", "the key {} is old"),
    ("password is", "hunter2", "the password is {} for prod"),
    ("pwd=", "s3cr3t!", "connect with pwd={} now"),
    ("passphrase", "correct horse battery staple", "passphrase: {}"),
    ("JSON password", "p@ss w0rd", 'config {{"password": "{}"}}'),
    ("URL credentials", "s3cret", "clone https://bob:{}@example.com/repo.git"),
    ("private key block", "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
     "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----"),
    ("OpenSSH key, cut off", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
     "-----BEGIN OPENSSH PRIVATE KEY-----\n{}"),
]


@pytest.mark.parametrize(("kind", "secret", "template"), SECRETS, ids=[s[0] for s in SECRETS])
def test_each_format_is_redacted(kind: str, secret: str, template: str) -> None:
    text = template.format(secret)
    out = redact(text)
    assert secret not in out and REDACTED in out, (kind, out)


def test_ordinary_text_is_kept_and_context_survives() -> None:
    for text in ("Fix the login retry in src/auth.py (issue #12)", "Rename tokenize() to lex()",
                 "Serve on 203.0.113.7:8080", "a-" * 50, "Refresh when the token is expired", "", "naïve café 😀", "the passphrase field is empty"):
        assert redact(text) == text
    assert redact("deploy with API_KEY=sk-abc123 now") == "deploy with [redacted] now"
    # a name followed by "::" is no assignment: pytest node ids, Rust and C++ paths keep their names
    for text in ("FAILED tests/test_password.py::test_reset - assert 1", "pytest tests/test_api_key.py::TestA::test_b",
                 "Refactor Token::parse in tokens.rs"):
        assert redact(text) == text
    assert redact("token: abc123 and password=:x1") == f"{REDACTED} and {REDACTED}"
    # a value after "key: " may start with a colon (only a name followed by "::" is none): it was kept whole
    assert redact("password: :hunter2x and secret: ::k9") == f"{REDACTED} and {REDACTED}"
    assert redact("  pwd=x  ") == f"  {REDACTED}  "  # whitespace around a secret is kept
    assert redact("lone \udc00 surrogate, pwd=x") == f"lone \udc00 surrogate, {REDACTED}"
    pair = "pwd=a1 and pwd=b2"
    assert redact(pair) == f"{REDACTED} and {REDACTED}"  # a short text: one by one
    assert redact("x " * JOIN_FROM + pair).endswith(f"x {REDACTED}")  # a long one: neighbours together


#: For each detect-secrets pattern RE2 rejects (secret_rules_upstream.DROPPED): a secret of that format, to show the
#: format is still caught by OWN_RULES. An upgrade of detect-secrets that drops a new pattern fails this test until
#: an example is added here (and a rule, when none catches it).
DROPPED_EXAMPLES = {
    "CloudantDetector": ['cloudant_password = "a8d3e5f09c1b2a4d6e8f"', "cl_api_key: ztkqjxsbmwqpcvnrlfhdaegy"],
    "GitLabTokenDetector": ["glpat-" + "a" * 20, "GR1348941" + "b" * 20, "glcbt-ab_" + "c" * 20, "glimt-" + "d" * 25,
                            "glptt-" + "e" * 40, "glagent-" + "f" * 50, "gloas-" + "0" * 64],
    "IbmCloudIamDetector": ['ibm_cloud_iam_api_key = "' + "x" * 44 + '"'],
    "IbmCosHmacDetector": ["ibm_cos_hmac_secret_access_key = " + "a1" * 24],
    "SoftlayerDetector": ["softlayer_api_key = " + "a" * 64],
}


def test_every_pattern_re2_rejects_is_still_caught_or_is_no_credential() -> None:
    plugins = {name for name, _pattern, _reason in DROPPED}
    assert plugins - {"IPPublicDetector"} <= set(DROPPED_EXAMPLES), "add an example of the newly dropped format"
    for plugin, examples in DROPPED_EXAMPLES.items():
        for example in examples:
            secret = example.split()[-1].strip('"')
            assert secret not in redact(f"use {example} now"), (plugin, example)
    assert redact("reach 203.0.113.7") == "reach 203.0.113.7"  # IPPublicDetector left out on purpose


def test_upstream_rules_are_in_sync_with_the_installed_detect_secrets() -> None:
    pytest.importorskip("detect_secrets")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "sync_secret_rules.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("unit", ["a-", "password=", "password=x ", "pwd=abc xxxxxxxxxxxxxxxxx ", "AKIA" + "A" * 17,
                                  "-----BEGIN PRIVATE KEY-----", "eyJ.", "é😀 "])
def test_a_megabyte_of_adversarial_text_never_hangs(unit: str) -> None:
    text = (unit * ((1 << 20) // len(unit) + 1))[: 1 << 20]
    started = time.monotonic()
    out = redact(text)
    assert time.monotonic() - started < 10, "hang guard (bench/redaction.py measures the real figure)"
    assert isinstance(out, str)


def test_secret_content() -> None:
    assert secret_content(b"key:\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n") == "it holds a private key"
    service_account = b'{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEv\\n"}'
    assert secret_content(service_account) == "it holds a private key"
    assert secret_content(b"PuTTY-User-Key-File-3: ssh-ed25519\n") == "it holds a private key"
    assert secret_content(b"//registry.npmjs.org/:_authToken=npm_abc\n") is not None
    for harmless in (b"", b"print('PRIVATE KEY handling')\n", b"registry=https://registry.npmjs.org/\n",
                     b"# set _authToken in your user .npmrc\n", b"//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n"):
        assert secret_content(harmless) is None


def test_url_without_credentials_shows_a_url_as_git_does() -> None:
    assert url_without_credentials("https://bob:ghp_x@github.com/o/r.git") == "https://github.com/o/r.git"
    assert url_without_credentials("https://ghp_x@github.com/o/r.git?a@b") == "https://github.com/o/r.git?a@b"
    assert url_without_credentials("ssh://git@host:22/r.git") == "ssh://host:22/r.git"
    for kept in ("git@github.com:o/r.git", "/srv/git/r.git", "https://github.com/o/r.git", "../r@2.git", ""):
        assert url_without_credentials(kept) == kept
