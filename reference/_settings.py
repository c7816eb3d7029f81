"""Settings under the spec's dotted keys, loadable from TOML, YAML or JSON and the environment.

A file may nest the keys (``[rag]`` / ``return-n = 5``) or spell them flat (``"rag.return-n": 5``).
An environment variable overrides a key: upper-case it and replace ``.`` and ``-`` with ``_``
(``rag.return-n`` -> ``RAG_RETURN_N``). Unknown keys are an error, never ignored.

About ``rag.max-l2-distance`` (the spec's ``maxL2Distance``): Milvus reports SQUARED Euclidean distance
for the L2 metric. For unit vectors that is ``d = 2 - 2 cos``, in [0, 4]. The default 2.0 makes dense
quality ``1 - min(d, 2) / 2 = max(0, cos)``: identical vectors score 1, orthogonal or opposite ones 0.
A value of 4 would give ``(1 + cos) / 2``, which rates unrelated (orthogonal) text at 0.5, exactly the
default reference threshold, so unrelated hits would pass the low-quality gate. Use the maximum squared
distance your embedding can produce that you still want to call "related".
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from ._errors import InvalidLimitError, InvalidMaxL2DistanceError, InvalidSettingError, InvalidThresholdError

__all__ = ["SETTING_KEYS", "Settings"]

SearchMode = Literal["dense", "hybrid"]

# dotted key -> attribute
SETTING_KEYS: dict[str, str] = {
    "retrieval.search.mode": "search_mode",
    "retrieval.search.rrf-k": "rrf_k",
    "rag.retrieve-k": "retrieve_k",
    "rag.return-n": "return_n",
    "rag.max-chunks-per-document": "max_chunks_per_document",
    "rag.max-l2-distance": "max_l2_distance",
    "rag.highly-relevant-threshold": "highly_relevant_threshold",
    "rag.reference-threshold": "reference_threshold",
    "rag.excerpt-max-chars": "excerpt_max_chars",
    "milvus.deadline-seconds": "deadline_seconds",
}
_KEY_OF = {attr: key for key, attr in SETTING_KEYS.items()}


class Settings(BaseModel):
    """Retrieval and post-process configuration. Attribute names are snake_case; keys are dotted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    search_mode: SearchMode = "hybrid"
    rrf_k: int = 60
    retrieve_k: int = 20
    return_n: int = 5
    max_chunks_per_document: int = 2
    max_l2_distance: float = 2.0
    highly_relevant_threshold: float = 0.75
    reference_threshold: float = 0.5
    excerpt_max_chars: int = 800
    # Not the spec's: how long the reference's store lets any one engine call take. An interactive
    # agent would rather hear "the engine did not answer" after a few seconds than wait for ever.
    deadline_seconds: float = 10.0

    def __init__(self, **data: Any) -> None:
        # Built by hand (Settings(return_n="five")), a bad value is the reference's error, not pydantic's.
        try:
            super().__init__(**data)
        except ValidationError as exc:
            err = exc.errors()[0]
            attr = str(err["loc"][0]) if err["loc"] else ""
            raise _SettingTypeError(_KEY_OF.get(attr, attr), err["msg"]) from None

    @field_validator(
        "rrf_k",
        "retrieve_k",
        "return_n",
        "max_chunks_per_document",
        "max_l2_distance",
        "highly_relevant_threshold",
        "reference_threshold",
        "excerpt_max_chars",
        "deadline_seconds",
        mode="before",
    )
    @classmethod
    def _no_bool(cls, value: Any) -> Any:
        # pydantic's lax mode reads True as 1; in a TOML/YAML file `return-n = true` is a mistake.
        if isinstance(value, bool):
            raise ValueError("a boolean is not a number")
        return value

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if not (math.isfinite(self.max_l2_distance) and self.max_l2_distance > 0):
            raise InvalidMaxL2DistanceError(
                _KEY_OF["max_l2_distance"],
                f"is {self.max_l2_distance}; it must be a finite number above 0 (2.0 for unit vectors)",
            )
        if not (math.isfinite(self.deadline_seconds) and self.deadline_seconds > 0):
            raise InvalidSettingError(
                _KEY_OF["deadline_seconds"],
                f"is {self.deadline_seconds}; it must be a finite number of seconds above 0 (default 10)",
            )
        for attr in ("highly_relevant_threshold", "reference_threshold"):
            value = getattr(self, attr)
            if not (math.isfinite(value) and 0.0 <= value <= 1.0):
                raise InvalidThresholdError(_KEY_OF[attr], f"is {value}; thresholds are qualities in [0, 1]")
        if self.highly_relevant_threshold < self.reference_threshold:
            raise InvalidThresholdError(
                _KEY_OF["highly_relevant_threshold"],
                f"is {self.highly_relevant_threshold}, below rag.reference-threshold "
                f"{self.reference_threshold}; a highly relevant result must also pass the low-quality gate",
            )
        for attr in ("retrieve_k", "return_n", "max_chunks_per_document", "excerpt_max_chars"):
            if getattr(self, attr) < 1:
                raise InvalidLimitError(_KEY_OF[attr], f"is {getattr(self, attr)}; it must be at least 1")
        if not 0 < self.rrf_k < 16384:
            raise InvalidSettingError(
                _KEY_OF["rrf_k"], f"is {self.rrf_k}; Milvus accepts RRF k in (0, 16384), default 60"
            )
        return self

    # -- loading -----------------------------------------------------------------------------------

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "settings") -> Settings:
        """Build settings from dotted keys, nested or flat."""
        flat = _flatten(data)
        unknown = sorted(set(flat) - set(SETTING_KEYS))
        if unknown:
            raise InvalidSettingError(
                unknown[0],
                f"unknown key in {source}; known keys are {', '.join(sorted(SETTING_KEYS))}",
            )
        try:
            return cls(**{SETTING_KEYS[key]: value for key, value in flat.items()})
        except _SettingTypeError as exc:
            raise InvalidSettingError(exc.key, f"{exc.reason} (in {source})") from None

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Settings:
        """Read a ``.toml``, ``.yaml``/``.yml`` or ``.json`` file."""
        path = Path(path)
        text = path.read_text(encoding="utf-8")
        suffix = path.suffix.lower()
        if suffix == ".toml":
            data = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        elif suffix == ".json":
            data = json.loads(text)
        else:
            raise InvalidSettingError(str(path), "settings files must end in .toml, .yaml, .yml or .json")
        if not isinstance(data, Mapping):
            raise InvalidSettingError(str(path), "the file must hold a table/mapping of settings")
        return cls.from_mapping(data, source=str(path))

    @classmethod
    def load(
        cls, path: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None
    ) -> Settings:
        """Defaults, then the file (if any), then environment overrides."""
        base: dict[str, Any] = {}
        if path is not None:
            base = {_KEY_OF[a]: v for a, v in cls.from_file(path).model_dump(exclude_unset=True).items()}
        environ = os.environ if environ is None else environ
        for key in SETTING_KEYS:
            name = env_name(key)
            if name in environ:
                base[key] = environ[name]
        return cls.from_mapping(base, source="settings file and environment")

    def as_dotted(self) -> dict[str, Any]:
        """The settings under their dotted keys."""
        return {key: getattr(self, attr) for key, attr in SETTING_KEYS.items()}


class _SettingTypeError(InvalidSettingError):
    """A value of the wrong type; :meth:`Settings.from_mapping` adds where it came from."""

    def __init__(self, key: str, reason: str) -> None:
        self.reason = reason
        super().__init__(key, reason)


def env_name(key: str) -> str:
    """The environment variable that overrides a dotted key."""
    return key.upper().replace(".", "_").replace("-", "_")


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and dotted not in SETTING_KEYS:
            flat.update(_flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat
