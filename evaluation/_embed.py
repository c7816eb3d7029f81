"""The embedder of labelled sets: wordllama's ``l2_supercat`` model, from the files inside its wheel.

One model for both sides, so that the reference's evaluation and the kit's upgrade check embed a set
alike; nothing is ever downloaded. The reference's store takes it through its ``Embedder`` Protocol
(``dim`` and ``embed(texts)``), which this class satisfies.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path

from ._errors import EmbedderUnavailableError

__all__ = ["WordLlamaEmbedder", "wordllama_installed"]


class WordLlamaEmbedder:
    """wordllama's ``l2_supercat`` model (256 dimensions), from the files inside the installed wheel.

    A static model: a text's vector is the average of its sub-word token embeddings, scaled here to
    unit length, so squared L2 is ``2 - 2 cos`` and a ``rag.max-l2-distance`` of 2 reads as
    ``max(0, cos)``. It knows synonyms and word forms, but it is still a bag of sub-words: a rare
    identifier's pieces (``DiskPressureHigh``) pull the text that contains them, while one that differs
    from its neighbours only in digits does not.

    Why not ``WordLlama.load()``: wordllama 0.4.0.post1 looks for its tokenizer under ``tokenizer/`` while
    the wheel ships it under ``tokenizers/``, and then tries to download it. Passing the package's own
    folder as ``cache_dir`` with ``disable_download=True`` finds both files, and a missing file becomes an
    error instead of a network call. ``model_dir`` points at another folder with the same layout
    (``weights/l2_supercat_256.safetensors``, ``tokenizers/l2_supercat_tokenizer_config.json``).
    """

    name = "wordllama"
    config = "l2_supercat"

    def __init__(self, *, model_dir: str | os.PathLike[str] | None = None) -> None:
        try:
            import wordllama
            from wordllama import WordLlama
        except ImportError:
            raise EmbedderUnavailableError(
                "the wordllama package is not installed; install the embed extra "
                "(pip install 'rag-quality-conformance[embed]') or use the hashing embedder"
            ) from None
        folder = Path(model_dir) if model_dir is not None else Path(wordllama.__file__).parent
        self.dim = 256
        self.version = getattr(wordllama, "__version__", "unknown")
        self.model_dir = folder
        files = (
            folder / "weights" / f"{self.config}_{self.dim}.safetensors",
            folder / "tokenizers" / f"{self.config}_tokenizer_config.json",
        )
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise EmbedderUnavailableError(
                f"wordllama model files are missing: {', '.join(missing)}; reinstall wordllama "
                "(0.4.0.post1 ships them in the wheel). Nothing is downloaded."
            )
        try:
            self._model = WordLlama.load(
                config=self.config, cache_dir=folder, dim=self.dim, disable_download=True
            )
        except (OSError, ValueError, RuntimeError) as exc:  # FileNotFoundError, a corrupt file
            raise EmbedderUnavailableError(f"cannot load the wordllama model from {folder}: {exc}") from None

    def __repr__(self) -> str:
        return f"WordLlamaEmbedder({self.config}, dim={self.dim}, wordllama {self.version})"

    def describe(self) -> str:
        """One line for people: which model, which dimension, and that it runs offline."""
        return (
            f"wordllama {self.config} ({self.dim}-d, wordllama {self.version}, "
            "offline from the installed wheel)"
        )

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        """Unit-length float32 vectors; a text the tokenizer leaves empty embeds to the zero vector."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; wrap a single text in a list")
        batch = list(texts)
        if not batch:
            return []
        vectors = np.asarray(self._model.embed(batch, norm=False), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        # wordllama's own norm=True divides by zero for an empty text (NaN); keep it the zero vector.
        vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
        return [tuple(row) for row in vectors.astype(np.float32).tolist()]


def wordllama_installed() -> bool:
    """Whether the ``wordllama`` package can be imported (its files are checked only when loading)."""
    return importlib.util.find_spec("wordllama") is not None
