"""The end-to-end tests run the encoder users get, and CI does not skip the mount tests."""

from __future__ import annotations

import os

import pytest
from test_database_faults import small_tmpfs

from hsc.embed import spec_for, spec_of
from hsc.params import Settings


def test_the_shared_fixture_embeds_with_the_default_encoder(embedder) -> None:
    assert spec_of(embedder) == spec_for(Settings())
    assert spec_of(embedder).backend == "onnx-int8"


def test_a_mount_that_fails_in_ci_as_root_fails_the_test(monkeypatch) -> None:
    if os.geteuid() != 0:
        pytest.skip("the rule is for root, who may mount")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="mounting a tmpfs must work"):
        with small_tmpfs("not-a-size"):
            pass
