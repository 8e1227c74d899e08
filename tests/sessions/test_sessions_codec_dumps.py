"""The store's JSON text: one encoder made once, whose output is exactly what
`json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes (STORE4-005)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_bridge.sessions import _codec
from acp_bridge.sessions._codec import dumps

pytestmark = pytest.mark.requirement("STORE4-005")

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def _reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@given(_JSON)
def test_the_text_is_json_dumps_text(value: Any) -> None:
    assert dumps(value) == _reference(value)


def test_non_ascii_is_kept_and_what_json_cannot_hold_is_refused() -> None:
    assert dumps({"t": "é\u2028😀", 1: [1.5, None]}) == '{"t":"é\u2028😀","1":[1.5,null]}'
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"x": object()})


def test_the_encoder_is_made_once() -> None:
    assert _codec._C_ENCODE is not None  # CPython: its C encoder, built at import
    first = _codec._C_ENCODE
    dumps({"a": 1})
    assert _codec._C_ENCODE is first


def test_without_the_c_encoder_the_text_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    def other_signature(*args: object) -> None:
        raise TypeError("c_make_encoder() takes other arguments")

    monkeypatch.setattr(_codec, "_make_c_encoder", other_signature)
    assert _codec._c_encoder() is None  # another Python's encoder factory: not used
    monkeypatch.setattr(_codec, "_C_ENCODE", None)
    value = {"t": "é\u2028😀", "n": [1.5, None, True, -3], "": {"k": '\x00"\\'}}
    assert dumps(value) == _reference(value)
