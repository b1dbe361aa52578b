import pytest

from hsc.params import Parameters, Settings, describe, load_toml, parse_assignments, split_overrides


def test_the_seed_parameters_are_all_there_under_their_names():
    names = {entry["name"] for entry in describe(Parameters)}
    assert {
        "minimum_chunk_token_length",
        "maximum_chunk_token_length",
        "embedding_batch_size",
        "similarity_drop_threshold",
        "smoothing_window_size",
        "maximum_merged_chunk_token_length",
        "mid_level_top_k",
        "leaf_level_top_k",
    } <= names
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
        ({"mid_level_top_k": "many"}, "expects an int"),
        ({"smoothing_window_size": "0"}, "smoothing_window_size must be >= 1"),
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
