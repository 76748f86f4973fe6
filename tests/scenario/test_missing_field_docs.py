"""A missing field is named with the first line of its docstring, read from the model's source
when the message is made (field_docs.py), at every level of a scenario."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError
from scenario_cases import scenario

from mptcplab.scenario import model
from mptcplab.scenario.field_docs import field_doc
from mptcplab.scenario.model import Scenario, issues

MODELS = [
    value
    for value in vars(model).values()
    if isinstance(value, type)
    and issubclass(value, BaseModel)
    and value.__module__ == model.__name__
]


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_every_required_field_has_a_docstring_to_name_it_with(cls: type[BaseModel]) -> None:
    required = [name for name, info in cls.model_fields.items() if info.is_required()]
    assert all(field_doc(cls, name) for name in required), [
        name for name in required if not field_doc(cls, name)
    ]


def test_a_docstring_is_the_one_under_its_own_field() -> None:
    assert field_doc(model.RedQueue, "max_packets") == (
        "Average queue (packets) at which the drop probability reaches ``max_p``."
    )
    assert field_doc(
        model.RedQueue,
        "gentle",
    ).startswith("Probability rises from ``max_p``")
    assert field_doc(model.FlowSpec, "no_such_field") is None


def _missing(mutate) -> str:
    with pytest.raises(ValidationError) as info:
        Scenario.model_validate(scenario(mutate))
    return issues(info.value)[0].message


def test_missing_fields_at_each_level_are_named_with_their_docstring() -> None:
    assert _missing(lambda d: d.pop("links")) == "missing field 'links': The links (at least one)"
    assert _missing(lambda d: d["flows"][0].pop("protocol")) == (
        "missing field 'protocol': 'tcp' (exactly one path) or 'mptcp' (one subflow per path)"
    )
    red = {"kind": "red", "min_packets": 5, "max_p": 0.1, "limit_packets": 50}
    assert _missing(lambda d: d["links"][0].update(queue=red)) == (
        "missing field 'max_packets': Average queue (packets) at which the drop probability "
        "reaches 'max_p'"
    )
