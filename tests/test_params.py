from dataclasses import fields

import pytest

from hsc.params import (
    SEED_PARAMETERS,
    Parameters,
    Settings,
    configure,
    describe,
    load_toml,
    parse_assignments,
    split_overrides,
)


def test_the_seed_parameters_are_all_there_under_their_names():
    names = {entry["name"] for entry in describe(Parameters)}
    assert len(SEED_PARAMETERS) == 8 and names >= SEED_PARAMETERS
    assert all(entry["help"] for entry in describe(Parameters) + describe(Settings))


def test_overrides_from_strings_and_toml(tmp_path):
    config = tmp_path / "hsc.toml"
    config.write_text('[parameters]\nsimilarity_drop_threshold = 0.3\n[settings]\nsummariser = "digest"\n')
    values = {**load_toml(config), **parse_assignments(["mid_level_top_k=7", "smoothing_window_size=1"])}
    params, settings = split_overrides(values, Parameters(), Settings())
    assert params.similarity_drop_threshold == 0.3 and params.mid_level_top_k == 7
    assert params.smoothing_window_size == 1 and settings.summariser == "digest"


@pytest.mark.parametrize(
    "values,message",
    [
        ({"similarity_threshold": "0.3"}, "unknown setting"),
        ({"mid_level_top_k": "many"}, "mid_level_top_k must be an integer >= 1, got 'many'"),
        ({"smoothing_window_size": "0"}, "smoothing_window_size must be an integer >= 1, got 0"),
        ({"max_file_bytes": "-1"}, "max_file_bytes must be an integer >= 1, got -1"),
        ({"max_line_length": "0"}, "max_line_length must be an integer >= 1, got 0"),
        ({"ollama_timeout": "-5"}, r"ollama_timeout must be a number from 0.1 to 3600.0, got -5.0"),
        ({"ollama_timeout": "nan"}, "ollama_timeout must be a number"),
        ({"similarity_drop_threshold": 1.5}, "similarity_drop_threshold must be a number from -1.0 to 1.0"),
        ({"smoothing_window_size": 2.5}, r"smoothing_window_size must be an integer >= 1, got 2.5"),
        ({"smoothing_window_size": 2.0}, r"smoothing_window_size must be an integer >= 1, got 2.0"),
        ({"mid_level_top_k": [1, 2]}, r"mid_level_top_k must be an integer >= 1, got a list \[1, 2\]"),
        ({"leaf_level_top_k": True}, "leaf_level_top_k must be an integer >= 1, got a boolean True"),
        ({"summariser": "gpt"}, "summariser must be 'digest' or 'ollama' or 'auto', got 'gpt'"),
        ({"ollama_model": 3}, "ollama_model must be a string, got 3"),
        ({"embedding_model": "  "}, "embedding_model must be a non-empty string"),
        ({"minimum_chunk_token_length": "100", "maximum_chunk_token_length": "50"}, "must be >= minimum"),
        ({"maximum_chunk_token_length": "4"}, "maximum_chunk_token_length"),
        ({"boundary_rule": "sometimes"}, "boundary_rule"),
    ],
)
def test_bad_values_are_refused_with_a_reason(values, message):
    with pytest.raises(ValueError, match=message):
        split_overrides(values, Parameters(), Settings())


def test_a_pair_without_equals_is_refused():
    with pytest.raises(ValueError, match="name=value"):
        parse_assignments(["threshold"])


def test_every_number_declares_its_allowed_range():
    """Fields added later declare theirs the same way: _p(..., minimum=..., maximum=...) or choices=."""
    for kind in (Parameters, Settings):
        for f in fields(kind):
            meta = f.metadata
            if str(f.type) in ("int", "float"):
                assert meta["minimum"] is not None or meta["maximum"] is not None, f.name
    rows = {row["name"]: row for row in describe(Settings) + describe(Parameters)}
    assert rows["max_file_bytes"]["allowed"] == "an integer >= 1"
    assert rows["boundary_rule"]["choices"] == ("valley", "threshold", "structure")


def test_values_set_in_python_are_checked_too():
    with pytest.raises(ValueError, match="max_line_length must be an integer >= 1, got 0"):
        Settings(max_line_length=0)
    with pytest.raises(ValueError, match="embedding_batch_size must be an integer from 1 to 4096"):
        Parameters(embedding_batch_size=0)


@pytest.mark.parametrize(
    "text,message",
    [
        ("[parameters]\nsmoothing_window_size = 2.5\n", "line 2: smoothing_window_size must be an integer"),
        ("\n\nmid_level_top_k = [1, 2]\n", "line 3: mid_level_top_k must be an integer >= 1, got a list"),
        (
            'summariser = "digest"\nmax_file_bytes = -1\n',
            "line 2: max_file_bytes must be an integer >= 1, got -1",
        ),
        ("similarity_drop_threshold = \n", "not valid TOML: Invalid value (at line 1, column 29)"),
        (
            "[parameters]\nmid_level_top_k = 3\n[settings]\nmid_level_top_k = 4\n",
            "line 2: mid_level_top_k is given twice",
        ),
        ("[parameters.extra]\nx = 1\n", "extra is a table; expected a value"),
        ("similarity_threshold = 0.3\n", "line 1: unknown setting(s): similarity_threshold"),
    ],
)
def test_toml_errors_name_the_file_line_and_key(tmp_path, text, message):
    config = tmp_path / "hsc.toml"
    config.write_text(text)
    with pytest.raises(ValueError) as error:
        configure(config)
    assert str(error.value).startswith(str(config))
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_set_value_overrides_a_bad_one_in_the_file(tmp_path):
    config = tmp_path / "hsc.toml"
    config.write_text("smoothing_window_size = 0\n")
    params, _ = configure(config, ["smoothing_window_size=2"])
    assert params.smoothing_window_size == 2
    with pytest.raises(ValueError, match=r"^smoothing_window_size must be an integer >= 1, got -3$"):
        configure(None, ["smoothing_window_size=-3"])
