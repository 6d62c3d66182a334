"""Secrets in free text and in files: the one redaction every writer of free text uses, and the file contents that
are never recorded.

Free text (intents, commit messages, checkpoint names, hooks' prompts) goes through :func:`redact` before anything
is written, so nothing in the shadow repository, nor anything ``push`` sends, holds a secret it recognises.

The rules are data: the token formats detect-secrets publishes (:mod:`.secret_rules_upstream`, generated from the
installed detect-secrets by ``scripts/sync_secret_rules.py``) and :data:`OWN_RULES` (formats detect-secrets lacks,
or whose pattern RE2 rejects, each with the document that defines the format). All are compiled into one RE2
expression (google-re2: linear in the text's length, no backtracking; Python's ``re`` is never used on the text):
a 1 MB text of any content is redacted in 2 to 80 milliseconds (``bench/redaction.py``). In a long text,
neighbouring secrets at most :data:`JOIN_GAP` characters apart become one ``[redacted]``, so the number of
replacements (each costs a Python call) stays under ``len(text) / JOIN_GAP``.
"""

from __future__ import annotations

import functools

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: a hook's prompt imports this module
if TYPE_CHECKING:  # for the annotations only: the functions below import re2 where they use it
    import re2

#: What a secret is replaced with.
REDACTED = "[redacted]"
_REDACTED_BYTES = REDACTED.encode()
#: In a text longer than :data:`JOIN_FROM` bytes, secrets at most this many characters apart are redacted together,
#: with the text between them (a shorter text, such as an intent, has its secrets replaced one by one).
JOIN_GAP = 64
JOIN_FROM = 16 * 1024
#: Texts up to this many characters are first tested by :func:`code_trajectory.core.secret_prefilter.
#: might_hold_secret`, and returned as they are when no rule can match them (longer texts go to RE2 at once).
PREFILTER_MAX_CHARS = 16 * 1024

#: Values assigned to secret-named keys: ``password=…``, ``pwd: …``, ``"api_key": "…"``
#: (the key names of detect-secrets' KeywordDetector, whose patterns RE2 rejects, and of the credentials
#: ``.pgpass``/``.netrc``/``.env`` files hold); the key and the value are redacted together.
#: Right after a ``:``, an unquoted value does not start with ``:``: a name followed by ``::`` (a pytest node id
#: ``tests/test_token.py::test_refresh``, Rust's ``Token::parse``) is no assignment; after ``: `` it may
#: (``password: :hunter2``).
_VALUE = r"(?:\"[^\"\n]*\"|'[^'\n]*'|\S+)"
_VALUE_AFTER_COLON = r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s:]\S*)"
_KEYWORD = (r"(?i:[\w.-]*(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|"
            r"private[_-]?key|auth[_-]?key|credentials?)[\w.-]*[\"']?[ \t]*"
            r"(?:(?::=|=>|=)[ \t]*" + _VALUE + r"|:[ \t]+" + _VALUE + "|:" + _VALUE_AFTER_COLON + "))")
#: ``password is …`` in prose: only for password keys (``the token is expired`` is no secret).
_PASSWORD_IS = r"(?i:[\w.-]*(?:password|passwd|pwd)[\w.-]*[ \t]+(?:is|was)[ \t]+" + _VALUE + ")"

#: ``(format, RE2 pattern)``: formats detect-secrets' rules miss or that RE2 cannot take from it; each comment
#: names the format's definition. Tried before detect-secrets' rules where both match at the same place.
OWN_RULES: tuple[tuple[str, str], ...] = (
    # Private keys in PEM/OpenSSH/OpenPGP armour (RFC 7468 section 2; OpenSSH PROTOCOL.key; RFC 4880 section 6.2),
    # header to footer, or to the end of the text when cut off.
    ("private key block", r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)"
                          r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)"),
    # PuTTY private key files (PuTTY manual, appendix C "PPK file format"): header to the Private-MAC line.
    ("PuTTY private key", r"PuTTY-User-Key-File-\d(?s:.*?)(?:Private-MAC:[ \t]*[0-9A-Fa-f]+|\z)"),
    # HTTP credentials (RFC 9110 section 11.6.2 Authorization header, any scheme; RFC 6750 section 2.1 Bearer
    # b64token, also without the header).
    ("authorization header", r"(?i:authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:[A-Za-z]+[ \t]+)?[A-Za-z0-9._~+/-]+=*)"),
    ("bearer token", r"(?i:bearer[ \t]+[A-Za-z0-9._~+/-]{8,}=*)"),
    # JSON Web Tokens (RFC 7519 section 3, JWS compact serialization): header.payload.signature, all of it
    # (detect-secrets' pattern ends lazily, which leaves the signature out of a replacement).
    ("JWT", r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"),
    # GitHub (docs "About authentication to GitHub", GitHub's token formats): ghp_ gho_ ghu_ ghs_ ghr_, and
    # fine-grained personal access tokens github_pat_.
    ("GitHub token", r"\bgh[pousr]_[A-Za-z0-9_]{30,}"),
    ("GitHub fine-grained token", r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    # GitLab (docs "GitLab token overview", token prefixes): detect-secrets' patterns end with (?!\w), which RE2
    # lacks; the greedy class takes the whole token instead.
    ("GitLab token", r"\b(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas|glffct|glwt)-"
                     r"[A-Za-z0-9_.-]{20,}"),
    ("GitLab runner registration token", r"\bGR1348941[A-Za-z0-9_-]{20,}"),
    # npm access tokens (GitHub blog 2021-09-23 "npm granular access tokens" / npm docs "About access tokens").
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}"),
    # Hugging Face user access tokens (huggingface.co docs "User access tokens").
    ("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
    # Google API keys (Google Cloud docs "Manage API keys": AIza + 35 characters).
    ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
    # Slack (api.slack.com "Token types": xoxb- xoxp- xoxa- xoxe- xoxr- xoxs- xoxo-, app-level xapp-).
    ("Slack token", r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}"),
    ("Slack app token", r"\bxapp-[A-Za-z0-9-]{10,}"),
    # Stripe (docs "API keys": secret sk_live_/sk_test_, restricted rk_live_/rk_test_).
    ("Stripe key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{10,}"),
    # Anthropic (docs "API keys": sk-ant-...) and OpenAI (docs "API keys": sk-, sk-proj-, sk-svcacct-).
    ("Anthropic or OpenAI key", r"\bsk-[A-Za-z0-9_-]{20,}"),
    # AWS (IAM user guide "Manage access keys"): an access key ID and, close after it, its 40-character secret.
    ("AWS key pair", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?s:.{1,40}?)[A-Za-z0-9/+]{40}"),
    # A passphrase is several words by definition (NIST SP 800-63B "memorized secret"): the rest of its line.
    ("passphrase", r"(?i:passphrase[\"']?(?:[ \t]*(?::=|=>|[:=])|[ \t]+(?:is|was))[^\n]*)"),
    ("credential assignment", _KEYWORD),
    ("password in prose", _PASSWORD_IS),
)


@functools.lru_cache(maxsize=2)
def _matcher(joined: bool) -> re2._Regexp[str]:
    """The compiled RE2 expression of every rule: one secret per match, or (``joined``) a run of secrets at most
    :data:`JOIN_GAP` characters apart (twice the program, so compiled only for long texts)."""
    import re2

    from code_trajectory.core.secret_rules_upstream import RULES

    options = re2.Options()
    options.log_errors = False
    options.never_capture = True  # only the span of a match is used: faster, fewer states
    options.max_mem = 64 << 20
    alternatives = "|".join(f"(?:{pattern})" for _name, pattern in (*OWN_RULES, *RULES))
    one = f"(?:{alternatives})"
    return re2.compile(f"{one}(?:(?s:.{{0,{JOIN_GAP}}}?){one})*" if joined else one, options)


#: Rules of :data:`OWN_RULES` that find a secret by the name it is given (``password = …``, ``Authorization: …``),
#: not by its format: they flag ordinary code (``self.password = password``), so :func:`token_format_matcher` leaves
#: them out, and so is detect-secrets' BasicAuthDetector (``postgres://user:pass@localhost`` of every example config).
NAMED_VALUE_RULES = frozenset({"authorization header", "bearer token", "passphrase", "credential assignment",
                               "password in prose", "BasicAuthDetector"})


def token_formats() -> tuple[tuple[str, str], ...]:
    """``(kind, RE2 pattern)`` of every rule that recognises a secret by its format alone (a token prefix, a key
    block): :data:`OWN_RULES` and detect-secrets' rules but :data:`NAMED_VALUE_RULES`; detect-secrets' kinds are
    its plugin class names."""
    from code_trajectory.core.secret_rules_upstream import RULES

    return tuple((name, pattern) for name, pattern in (*OWN_RULES, *RULES) if name not in NAMED_VALUE_RULES)


@functools.lru_cache(maxsize=1)
def token_format_matcher() -> re2._Regexp[bytes]:
    """One RE2 expression of :func:`token_formats`, for bytes (file contents): linear in the data's length."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    options.max_mem = 64 << 20
    return re2.compile("|".join(f"(?:{pattern})" for _kind, pattern in token_formats()).encode(), options)


def token_format_kind(found: bytes) -> str:
    """The kind of secret ``found`` (a match of :func:`token_format_matcher`) is: the first rule matching it."""
    import re2

    for kind, pattern in token_formats():
        if re2.search(pattern.encode(), found):
            return kind
    return "token"


def redact(text: str) -> str:
    """``text`` with every secret the rules recognise replaced by :data:`REDACTED`.

    Args:
        text: any text (lone surrogates are kept as they are).

    Returns:
        The text, secrets replaced; whitespace around a secret is kept. Linear in ``len(text)``.
    """
    if not text:
        return text
    if len(text) <= PREFILTER_MAX_CHARS:
        from code_trajectory.core.secret_prefilter import might_hold_secret

        if not might_hold_secret(text):  # no rule can match: no RE2 to import and compile (a hook's prompt)
            return text
    data = text.encode("utf-8", "surrogatepass")
    regexp = _matcher(len(data) > JOIN_FROM)
    pieces: list[bytes] = []
    end = 0
    for match in regexp.finditer(data):
        start, stop = match.span()
        if start == stop:
            continue
        found = data[start:stop]
        lead = len(found) - len(found.lstrip())
        trail = len(found) - len(found.rstrip())
        pieces.append(data[end:start + lead])
        pieces.append(_REDACTED_BYTES)
        end = stop - trail
    if not pieces:
        return text
    pieces.append(data[end:])
    joined = b"".join(pieces)
    try:
        return joined.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:  # a replacement cut a malformed sequence: keep the text readable
        return joined.decode("utf-8", "replace")


#: Secret-bearing files that never enter the shadow repository, whatever the
#: project's ignore rules say (gitignore syntax, each matched at any depth, also
#: those with a ``/`` inside such as ``.docker/config.json``, and ignoring case:
#: ``.ENV`` is ``.env`` on macOS and Windows, and a secret on Linux too). Sources:
#: GitHub's gitignore templates and the credential files named by the AWS, npm,
#: PyPI, SSH and GnuPG documentation.
_BASE_DENY_PATTERNS: tuple[str, ...] = (
    ".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    ".npmrc", ".pypirc", ".netrc", "_netrc", ".git-credentials", "credentials.json",
    "*.p12", "*.pfx", "*.jks", "*.keystore", ".aws/", ".ssh/", ".gnupg/", ".docker/config.json",
    "*.kdbx", "secrets.yml", "secrets.yaml", ".htpasswd",
    # credentials files of common tools: PostgreSQL's password file (.pgpass), direnv's environment (.envrc),
    # Terraform state (it stores resource secrets in plain text), Kubernetes client configs, Vault's token helper
    ".pgpass", ".envrc", "*.tfstate", "*.tfstate.backup", "kubeconfig", "*.kubeconfig", ".kube/", ".vault-token",
    # Terraform's variable files (GitHub's Terraform.gitignore: "may contain sensitive data"), Streamlit's secrets,
    # MySQL's option file, s3cmd's and boto's configs, Docker's legacy auth file, the GitHub CLI's token file,
    # Google Cloud's application default credentials
    "*.tfvars", "*.tfvars.json", ".streamlit/secrets.toml", ".my.cnf", ".mylogin.cnf", ".s3cfg", ".boto",
    ".dockercfg", "gh/hosts.yml", "application_default_credentials.json",
)
#: Suffixes editors and tools give a copy of a file (Emacs and vim backups, ``.bak``, ``.orig`` of patch and merge
#: tools, ``.old``): a copy of a secret is one.
BACKUP_SUFFIXES = ("~", ".bak", ".orig", ".old")
#: The deny list: :data:`_BASE_DENY_PATTERNS` and, for each that names files and does not already end in ``*``, its
#: copies with :data:`BACKUP_SUFFIXES` (``.env~``, ``server.key.bak``, ``credentials.json.orig``).
DENY_PATTERNS: tuple[str, ...] = _BASE_DENY_PATTERNS + tuple(
    pattern + suffix for pattern in _BASE_DENY_PATTERNS if not pattern.endswith(("/", "*"))
    for suffix in BACKUP_SUFFIXES)


def denied_by_default(rel: str) -> bool:
    """Whether ``rel`` (a path relative to the project root, ``/``-separated) may be on the built-in deny list: a
    part of it matches a pattern of :data:`DENY_PATTERNS` ignoring case (a pattern with a ``/`` against the
    path's end). A cheap, wider test than the recorder's (:mod:`code_trajectory.recording.ignore`, gitignore rules
    with the configured patterns), for code that must not copy a secret and cannot load those rules: the edit
    hook's hand-over (:mod:`code_trajectory.recording.handoff`)."""
    from fnmatch import fnmatch

    parts = rel.lower().split("/")
    for pattern in DENY_PATTERNS:
        bare = pattern.rstrip("/").lower()
        if "/" in bare:
            if fnmatch("/".join(parts[-(bare.count("/") + 1):]), bare):
                return True
        elif any(fnmatch(part, bare) for part in (parts if pattern.endswith("/") else parts[-1:]) if part):
            return True
    return False


#: Markers of files that are secrets whatever their name (see :func:`secret_content`).
_PRIVATE_KEY_MARK = b"PRIVATE KEY"
_NPM_TOKEN_MARK = b"_authToken"


@functools.lru_cache(maxsize=1)
def _content_matcher() -> re2._Regexp[bytes]:
    import re2

    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    return re2.compile(rb"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d|"
                       rb"(?m:^[ \t]*(?:@[\w.-]+:)?(?://[^\s]*:)?_authToken[ \t]*=[ \t]*[^\s$])", options)


def secret_content(data: bytes) -> str | None:
    """Why the file content ``data`` is a secret that is never recorded, or None.

    A file is a secret when it holds a private key block (RFC 7468 ``-----BEGIN ... PRIVATE KEY-----``, OpenSSH,
    OpenPGP; a key inside a JSON string, as in a Google service-account file, counts) or a PuTTY key file, or sets
    an npm registry token (``//registry/:_authToken=…``, npm docs "npmrc"; not a ``${VARIABLE}`` reference, which
    npm expands from the environment). A substring test comes first, so
    ordinary files cost one scan of their bytes in C.
    """
    if _PRIVATE_KEY_MARK not in data and _NPM_TOKEN_MARK not in data and b"PuTTY-User-Key-File-" not in data:
        return None
    found = _content_matcher().search(data)
    if found is None:
        return None
    text = found.group(0)
    if b"_authToken" in text:
        return "it sets an npm registry token (_authToken)"
    return "it holds a private key"


def url_without_credentials(url: str) -> str:
    """``url`` as git shows it in its own messages (``transport_anonymize_url``): a URL with a scheme loses the
    user information of its authority (``https://bob:ghp_…@host/repo.git`` → ``https://host/repo.git``); any other
    URL (a path, ``git@host:repo``, which holds no password) is returned as it is. For URLs that are printed or
    stored; the network call keeps the URL as configured.
    """
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme or "/" in scheme:
        return url
    authority_end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    userinfo, at, host = rest[:authority_end].rpartition("@")
    return f"{scheme}://{host}{rest[authority_end:]}" if at else url
