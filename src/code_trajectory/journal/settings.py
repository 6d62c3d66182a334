"""Settings of the journal: the ``[journal]`` table of the config file.

The keys are those of the design's configuration block, as TOML tables
(all optional; the values shown are the defaults)::

    [journal]
    journal_data_path = "~/.local/share/code-trajectory/journal"  # default: <CODE_TRAJECTORY_HOME>/journal

    [journal.git_config]
    auto_gc = true                      # run `git gc --auto` after writes
    commit_author = "Journal Server <journal@localhost>"   # author and committer of new entries

    [journal.temporal_decay]
    half_life_days = 30.0               # an entry's salience halves every 30 days
    minimum_salience = 0.1              # salience never drops below this
    recency_weight = 0.2                # how much salience can move the score (0 = none, 1 = prototype)

    [journal.search]
    default_salience_threshold = 0.5    # minimum combined score of a search result
    max_results = 20                    # most results one search returns
    context_weight = 0.5                # weight of the work_context score
    content_weight = 0.5                # weight of the content score
    ranking = "auto"                    # "auto" (semantic when installed), "semantic" or "lexical"

    [journal.embeddings]
    model = "sentence-transformers/all-MiniLM-L6-v2"   # the only model supported
    cache_path = ""                     # SQLite cache; default <journal>/.git/code-trajectory-search.sqlite
    onnx_path = ""                      # optional: another ONNX export of the model (skips the hash check)
    tokenizer_path = ""                 # optional: another tokenizer.json

Where the journal lives, highest precedence first: ``--journal-dir`` (the
``journal_dir`` override of :meth:`JournalSettings.load`), the environment
variable ``CODE_TRAJECTORY_JOURNAL_DIR``, ``journal_data_path`` in the config,
then ``<CODE_TRAJECTORY_HOME>/journal``. A relative ``journal_data_path`` or
``cache_path`` is taken relative to the home directory (:func:`home_dir`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from code_trajectory.core.config import load_table
from code_trajectory.core.errors import ConfigError
from code_trajectory.core.paths import home_dir

JOURNAL_DIR_ENV = "CODE_TRAJECTORY_JOURNAL_DIR"
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: Spellings of the one supported embedding model.
SUPPORTED_MODELS = frozenset({DEFAULT_MODEL, "all-MiniLM-L6-v2", "all-minilm-l6-v2"})
RANKINGS = ("auto", "semantic", "lexical")

_AUTHOR_RE = re.compile(r"^\s*(?P<name>[^<>]+?)\s*<(?P<email>[^<>\s]*)>\s*$")


@dataclass(frozen=True)
class JournalSettings:
    """Resolved journal settings (see the module docstring for the TOML keys).

    Attributes:
        journal_data_path: the journal's git repository (work tree), absolute.
        auto_gc: run ``git gc --auto`` after each write.
        commit_author: ``"Name <email>"`` used as author and committer of new entries.
        half_life_days: days after which an entry's temporal salience halves (> 0).
        minimum_salience: floor of the temporal salience, in [0, 1].
        recency_weight: share of the score that salience can take away, in [0, 1]
            (see :mod:`code_trajectory.journal.search` for the formula).
        default_salience_threshold: threshold used when a search gives none, in [0, 1].
        max_results: most results one search returns (>= 1).
        context_weight: weight of the work_context score (>= 0).
        content_weight: weight of the content score (>= 0; the two may not both be 0).
        ranking: ``"auto"``, ``"semantic"`` or ``"lexical"``.
        embeddings_model: the sentence-embedding model (only all-MiniLM-L6-v2).
        cache_path: the SQLite search cache file, or None for the default inside the git dir.
        onnx_path: an ONNX file to use instead of the packaged one, or None.
        tokenizer_path: a ``tokenizer.json`` to use instead of the packaged one, or None.
    """

    journal_data_path: Path
    auto_gc: bool = True
    commit_author: str = "Journal Server <journal@localhost>"
    half_life_days: float = 30.0
    minimum_salience: float = 0.1
    recency_weight: float = 0.2
    default_salience_threshold: float = 0.5
    max_results: int = 20
    context_weight: float = 0.5
    content_weight: float = 0.5
    ranking: str = "auto"
    embeddings_model: str = DEFAULT_MODEL
    cache_path: Path | None = None
    onnx_path: Path | None = None
    tokenizer_path: Path | None = None

    @property
    def author(self) -> tuple[str, str]:
        """``(name, email)`` parsed from :attr:`commit_author`."""
        match = _AUTHOR_RE.match(self.commit_author)
        if not match:  # validated() guarantees a match
            raise ConfigError(f"commit_author must look like 'Name <email>', got {self.commit_author!r}")
        return match.group("name"), match.group("email")

    @property
    def search_cache_file(self) -> Path:
        """The SQLite cache file: :attr:`cache_path` (a directory gets ``search.sqlite``) or the default."""
        if self.cache_path is None:
            return self.journal_data_path / ".git" / "code-trajectory-search.sqlite"
        if self.cache_path.suffix in (".sqlite", ".sqlite3", ".db"):
            return self.cache_path
        return self.cache_path / "search.sqlite"

    def validated(self) -> JournalSettings:
        """Return self after checking types and ranges.

        Raises:
            ConfigError: a value is out of range.
        """
        if not _AUTHOR_RE.match(self.commit_author):
            raise ConfigError(f"[journal.git_config] commit_author must look like 'Name <email>', "
                              f"got {self.commit_author!r}")
        if not self.half_life_days > 0:
            raise ConfigError(f"[journal.temporal_decay] half_life_days must be > 0, got {self.half_life_days}")
        for name in ("minimum_salience", "recency_weight", "default_salience_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"journal setting {name} must be in [0, 1], got {value}")
        if self.max_results < 1:
            raise ConfigError(f"[journal.search] max_results must be >= 1, got {self.max_results}")
        if self.context_weight < 0 or self.content_weight < 0 or self.context_weight + self.content_weight <= 0:
            raise ConfigError("[journal.search] context_weight and content_weight must be >= 0 and not both 0")
        if self.ranking not in RANKINGS:
            raise ConfigError(f"[journal.search] ranking must be one of {', '.join(RANKINGS)}, got {self.ranking!r}")
        if self.embeddings_model not in SUPPORTED_MODELS:
            raise ConfigError(f"[journal.embeddings] model {self.embeddings_model!r} is not supported; the journal "
                              f"ships {DEFAULT_MODEL} only (point onnx_path/tokenizer_path at another export of it)")
        return self

    @classmethod
    def load(cls, journal_dir: str | os.PathLike[str] | None = None, project_root: Path | None = None,
             **overrides: Any) -> JournalSettings:
        """Build settings from defaults, the ``[journal]`` config table, the environment and overrides.

        Args:
            journal_dir: the ``--journal-dir`` flag (wins over everything), or None.
            project_root: passed to :func:`load_table` for a project config file.
            **overrides: field values that win over the config (``None`` values ignored).

        Raises:
            ConfigError: unknown key, wrong type or out-of-range value.
        """
        table = load_table("journal", project_root)
        values = _flatten(table)
        values.update({k: v for k, v in overrides.items() if v is not None})
        env_dir = os.environ.get(JOURNAL_DIR_ENV)
        if journal_dir is not None and str(journal_dir) != "":
            path = Path(journal_dir).expanduser()
        elif env_dir:
            path = Path(env_dir).expanduser()
        elif values.get("journal_data_path"):
            path = _resolve(values["journal_data_path"])
        else:
            path = home_dir() / "journal"
        values.pop("journal_data_path", None)
        try:
            settings = cls(journal_data_path=Path(os.path.abspath(path)))
            converted: dict[str, Any] = {}
            for key, value in values.items():
                converted[key] = _convert(key, value)
            settings = replace(settings, **converted)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"bad [journal] setting: {exc}") from exc
        return settings.validated()


#: TOML key (dotted, below [journal]) -> dataclass field.
_KEYS: dict[str, str] = {
    "journal_data_path": "journal_data_path",
    "git_config.auto_gc": "auto_gc",
    "git_config.commit_author": "commit_author",
    "temporal_decay.half_life_days": "half_life_days",
    "temporal_decay.minimum_salience": "minimum_salience",
    "temporal_decay.recency_weight": "recency_weight",
    "search.default_salience_threshold": "default_salience_threshold",
    "search.max_results": "max_results",
    "search.context_weight": "context_weight",
    "search.content_weight": "content_weight",
    "search.ranking": "ranking",
    "embeddings.model": "embeddings_model",
    "embeddings.cache_path": "cache_path",
    "embeddings.onnx_path": "onnx_path",
    "embeddings.tokenizer_path": "tokenizer_path",
}


def _flatten(table: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            for sub, subvalue in value.items():
                dotted = f"{key}.{sub}"
                if dotted not in _KEYS:
                    raise ConfigError(f"unknown key [journal.{key}].{sub}; known keys: "
                                      f"{', '.join(sorted(_KEYS))}")
                out[_KEYS[dotted]] = subvalue
        elif key in _KEYS:
            out[_KEYS[key]] = value
        else:
            raise ConfigError(f"unknown key [journal].{key}; known keys: {', '.join(sorted(_KEYS))}")
    return out


def _resolve(value: Any) -> Path:
    path = Path(str(value)).expanduser()
    return path if path.is_absolute() else home_dir() / path


def _convert(field_name: str, value: Any) -> Any:
    if field_name in ("cache_path", "onnx_path", "tokenizer_path"):
        return _resolve(value) if value not in (None, "") else None
    if field_name == "auto_gc":
        if not isinstance(value, bool):
            raise TypeError(f"auto_gc must be true or false, got {value!r}")
        return value
    if field_name == "max_results":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
            raise TypeError(f"max_results must be an integer, got {value!r}")
        return int(value)
    if field_name in ("commit_author", "ranking", "embeddings_model"):
        if not isinstance(value, str):
            raise TypeError(f"{field_name} must be a string, got {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{field_name} must be a number, got {value!r}")
    return float(value)
