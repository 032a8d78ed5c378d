"""amd-smi parsers: the real version line, documented JSON shapes, hypothesis."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clustergrade.collect.amdsmi import (
    AmdSmiParseError,
    parse_amd_smi_static,
    parse_amd_smi_version,
)
from tests.helpers import fixture_bytes


def test_version_line_from_rocm_changelog() -> None:
    v = parse_amd_smi_version(fixture_bytes("amd/amd-smi-version-24.7.1.txt").decode())
    assert v == {"tool": "24.7.1+b446d6c-dirty", "rocm": None, "amdgpu": "6.10.10"}
    assert parse_amd_smi_version("nothing here") == {"tool": None, "rocm": None, "amdgpu": None}


def test_gpu_data_wrapper_and_string_sizes() -> None:
    doc = {
        "gpu_data": [
            {
                "gpu": 3,
                "asic": {"market_name": "AMD Instinct MI250X"},
                "driver": {"name": "amdgpu", "version": "6.7.0"},
                "vram": {"size": "65536 MB"},
            },
            "junk",
        ]
    }
    gpus, driver = parse_amd_smi_static(json.dumps(doc))
    assert driver == "6.7.0" and len(gpus) == 1
    assert gpus[0].index == 3 and gpus[0].memory_total_mib == 65536
    assert gpus[0].model == "AMD Instinct MI250X"


@pytest.mark.parametrize("text", ["", "{", "42", '{"x": 1}', "[" * 5000])
def test_unreadable_raises_typed_error(text: str) -> None:
    with pytest.raises(AmdSmiParseError):
        parse_amd_smi_static(text)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "gpu",
                    "asic",
                    "market_name",
                    "vram",
                    "size",
                    "value",
                    "unit",
                    "bus",
                    "bdf",
                    "driver",
                    "version",
                    "vbios",
                    "gpu_data",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_random_json_only_raises_typed_error(doc: object) -> None:
    try:
        parse_amd_smi_static(json.dumps(doc))
    except AmdSmiParseError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_random_text_never_raises_untyped(text: str) -> None:
    parse_amd_smi_version(text)
    try:
        parse_amd_smi_static(text)
    except AmdSmiParseError:
        pass
