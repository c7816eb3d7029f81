"""Settings: defaults, files in three formats (nested or flat dotted keys), environment overrides."""

import json

import pytest
from pydantic import ValidationError

from reference import InvalidSettingError, Settings

DEFAULTS = {
    "retrieval.search.mode": "hybrid",
    "retrieval.search.rrf-k": 60,
    "rag.retrieve-k": 20,
    "rag.return-n": 5,
    "rag.max-chunks-per-document": 2,
    "rag.max-l2-distance": 2.0,
    "rag.highly-relevant-threshold": 0.75,
    "rag.reference-threshold": 0.5,
    "rag.excerpt-max-chars": 800,
    "milvus.deadline-seconds": 10.0,
}

CHANGED = {
    "retrieval.search.mode": "dense",
    "rag.return-n": 3,
    "rag.max-chunks-per-document": 1,
    "rag.max-l2-distance": 4.0,
    "rag.reference-threshold": 0.4,
}

NESTED_TOML = """
[retrieval.search]
mode = "dense"

[rag]
return-n = 3
max-chunks-per-document = 1
max-l2-distance = 4.0
reference-threshold = 0.4
"""

FLAT_TOML = """
"retrieval.search.mode" = "dense"
"rag.return-n" = 3
"rag.max-chunks-per-document" = 1
"rag.max-l2-distance" = 4.0
"rag.reference-threshold" = 0.4
"""

NESTED_YAML = """
retrieval:
  search:
    mode: dense
rag:
  return-n: 3
  max-chunks-per-document: 1
  max-l2-distance: 4.0
  reference-threshold: 0.4
"""

FLAT_YAML = """
retrieval.search.mode: dense
rag.return-n: 3
rag.max-chunks-per-document: 1
rag.max-l2-distance: 4.0
rag.reference-threshold: 0.4
"""

NESTED_JSON = json.dumps(
    {
        "retrieval": {"search": {"mode": "dense"}},
        "rag": {
            "return-n": 3,
            "max-chunks-per-document": 1,
            "max-l2-distance": 4.0,
            "reference-threshold": 0.4,
        },
    }
)

FLAT_JSON = json.dumps(CHANGED)

# Half nested, half flat: both spellings may meet in one file.
MIXED_JSON = json.dumps(
    {
        "retrieval.search": {"mode": "dense"},
        "rag": {"return-n": 3, "max-chunks-per-document": 1},
        "rag.max-l2-distance": 4.0,
        "rag.reference-threshold": 0.4,
    }
)


def test_defaults():
    assert Settings().as_dotted() == DEFAULTS


def test_load_without_file_or_environment_gives_defaults():
    assert Settings.load(environ={}) == Settings()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("nested.toml", NESTED_TOML),
        ("flat.toml", FLAT_TOML),
        ("nested.yaml", NESTED_YAML),
        ("flat.yaml", FLAT_YAML),
        ("nested.yml", NESTED_YAML),
        ("nested.json", NESTED_JSON),
        ("flat.json", FLAT_JSON),
        ("mixed.json", MIXED_JSON),
        ("UPPER.TOML", NESTED_TOML),
    ],
)
def test_from_file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    expected = {**DEFAULTS, **CHANGED}
    assert Settings.from_file(path).as_dotted() == expected
    assert Settings.from_file(str(path)).as_dotted() == expected
    assert Settings.load(path, environ={}).as_dotted() == expected


def test_empty_yaml_file_gives_defaults(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    assert Settings.from_file(path) == Settings()


def test_from_mapping_nested_and_flat_agree():
    nested = {"rag": {"return-n": 7, "retrieve-k": 30}, "retrieval": {"search": {"rrf-k": 10}}}
    flat = {"rag.return-n": 7, "rag.retrieve-k": 30, "retrieval.search.rrf-k": 10}
    assert Settings.from_mapping(nested) == Settings.from_mapping(flat)
    assert Settings.from_mapping(flat).return_n == 7


def test_as_dotted_round_trips():
    settings = Settings.from_mapping(CHANGED)
    assert Settings.from_mapping(settings.as_dotted()) == settings


@pytest.mark.parametrize(
    ("variable", "value", "key", "expected"),
    [
        ("RAG_RETURN_N", "3", "rag.return-n", 3),
        ("RAG_MAX_CHUNKS_PER_DOCUMENT", "4", "rag.max-chunks-per-document", 4),
        ("RAG_RETRIEVE_K", "50", "rag.retrieve-k", 50),
        ("RAG_MAX_L2_DISTANCE", "4", "rag.max-l2-distance", 4.0),
        ("RAG_HIGHLY_RELEVANT_THRESHOLD", "0.9", "rag.highly-relevant-threshold", 0.9),
        ("RAG_REFERENCE_THRESHOLD", "0.25", "rag.reference-threshold", 0.25),
        ("RAG_EXCERPT_MAX_CHARS", "120", "rag.excerpt-max-chars", 120),
        ("RETRIEVAL_SEARCH_MODE", "dense", "retrieval.search.mode", "dense"),
        ("RETRIEVAL_SEARCH_RRF_K", "100", "retrieval.search.rrf-k", 100),
        ("MILVUS_DEADLINE_SECONDS", "2.5", "milvus.deadline-seconds", 2.5),
    ],
)
def test_environment_overrides_a_key(variable, value, key, expected):
    settings = Settings.load(environ={variable: value, "UNRELATED": "x"})
    assert settings.as_dotted() == {**DEFAULTS, key: expected}


def test_environment_overrides_the_file(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(NESTED_TOML, encoding="utf-8")
    settings = Settings.load(path, environ={"RAG_RETURN_N": "9", "RETRIEVAL_SEARCH_MODE": "hybrid"})
    assert settings.as_dotted() == {
        **DEFAULTS,
        **CHANGED,
        "rag.return-n": 9,
        "retrieval.search.mode": "hybrid",
    }


def test_load_reads_the_process_environment_by_default(monkeypatch):
    monkeypatch.setenv("RAG_RETURN_N", "2")
    assert Settings.load().return_n == 2


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"rag.return_n": 3}, "rag.return_n"),
        ({"rag": {"returnN": 3}}, "rag.returnN"),
        ({"rag": {"return-n": 3, "boost-keywords": True}}, "rag.boost-keywords"),
        ({"retrieval": {"search": {"mode": "dense", "metric": "L2"}}}, "retrieval.search.metric"),
        ({"rag": 5}, "rag"),
        ({"return-n": 3}, "return-n"),
    ],
)
def test_unknown_key_is_an_error_naming_it(data, key):
    with pytest.raises(InvalidSettingError) as info:
        Settings.from_mapping(data)
    assert info.value.key == key
    assert key in str(info.value)


def test_unknown_key_in_a_file_names_the_key_and_the_file(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text("rag:\n  retrun-n: 3\n", encoding="utf-8")
    with pytest.raises(InvalidSettingError) as info:
        Settings.from_file(path)
    assert "rag.retrun-n" in str(info.value)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"rag": {"return-n": "many"}}, "rag.return-n"),
        ({"rag.return-n": 2.5}, "rag.return-n"),
        ({"rag.return-n": [3]}, "rag.return-n"),
        ({"rag": {"max-chunks-per-document": {"value": 2}}}, "rag.max-chunks-per-document"),
        ({"rag.max-l2-distance": "far"}, "rag.max-l2-distance"),
        ({"rag.reference-threshold": None}, "rag.reference-threshold"),
        ({"retrieval": {"search": {"mode": "sparse"}}}, "retrieval.search.mode"),
        ({"retrieval.search.rrf-k": "sixty"}, "retrieval.search.rrf-k"),
        ({"milvus.deadline-seconds": "soon"}, "milvus.deadline-seconds"),
        ({"milvus.deadline-seconds": 0}, "milvus.deadline-seconds"),
        ({"milvus.deadline-seconds": float("inf")}, "milvus.deadline-seconds"),
        ({"milvus.deadline-seconds": True}, "milvus.deadline-seconds"),
    ],
)
def test_wrong_type_is_an_error_naming_the_dotted_key(data, key):
    with pytest.raises(InvalidSettingError) as info:
        Settings.from_mapping(data)
    assert info.value.key == key
    assert key in str(info.value)


@pytest.mark.parametrize("key", ["rag.return-n", "rag.max-chunks-per-document", "rag.max-l2-distance"])
def test_boolean_is_not_a_number(key):
    # YAML/TOML `true` must not silently become 1.
    with pytest.raises(InvalidSettingError) as info:
        Settings.from_mapping({key: True})
    assert info.value.key == key


def test_wrong_type_from_the_environment_names_the_key():
    with pytest.raises(InvalidSettingError) as info:
        Settings.load(environ={"RAG_RETURN_N": "three"})
    assert info.value.key == "rag.return-n"
    assert "rag.return-n" in str(info.value)


@pytest.mark.parametrize("name", ["settings.ini", "settings.cfg", "settings", "settings.toml.bak"])
def test_bad_extension_is_an_error_naming_the_file(tmp_path, name):
    path = tmp_path / name
    path.write_text("rag.return-n = 3\n", encoding="utf-8")
    with pytest.raises(InvalidSettingError) as info:
        Settings.from_file(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(("name", "text"), [("list.json", "[1, 2]"), ("scalar.yaml", "5\n")])
def test_file_must_hold_a_mapping(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidSettingError) as info:
        Settings.from_file(path)
    assert str(path) in str(info.value)


def test_settings_are_frozen():
    settings = Settings()
    with pytest.raises(ValidationError):
        settings.return_n = 10  # type: ignore[misc]


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"return_n": "five"}, "rag.return-n"),
        ({"deadline_seconds": "soon"}, "milvus.deadline-seconds"),
        ({"search_mode": "sparse"}, "retrieval.search.mode"),
        ({"boost": 1}, "boost"),
    ],
)
def test_settings_built_by_hand_refuse_a_wrong_value_with_the_reference_s_error(values, key):
    with pytest.raises(InvalidSettingError) as info:
        Settings(**values)
    assert not isinstance(info.value, ValidationError)
    assert info.value.key == key
    assert key in str(info.value)
