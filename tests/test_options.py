"""Reading the settings of a run from options and ini values, without pytest."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_replio_eval.options import EvalOptions, OptionError, read_options, spec_list
from pytest_replio_eval.providers.base import ProviderSpec


def read(options: dict[str, Any] | None = None, ini: dict[str, str] | None = None) -> EvalOptions:
    given: dict[str, Any] = {
        "replio_fixture": [],
        "replio_only": False,
        "replio_fail_on_regression": False,
    }
    given.update(options or {})
    return read_options(given.get, lambda name: (ini or {}).get(name, ""))


def test_no_provider_means_no_specs() -> None:
    assert read().specs == []


def test_the_option_wins_over_the_ini_value() -> None:
    options = read({"replio_provider": spec_list("openai:a")}, {"replio_provider": "ollama:b"})
    assert options.specs == [ProviderSpec("openai", "a")]


def test_ini_values_are_parsed_as_the_option_would_be() -> None:
    options = read(ini={"replio_provider": "mock", "replio_max_steps": "5", "replio_timeout": "30"})
    assert options.specs == [ProviderSpec("mock")]
    assert options.settings.max_steps == 5
    assert options.settings.timeout == 30.0
    # No request may outlive its turn.
    assert options.settings.provider.request_timeout == 30.0


def test_a_bad_ini_value_names_the_setting_and_the_reason() -> None:
    with pytest.raises(OptionError) as caught:
        read(ini={"replio_provider": "mock", "replio_max_steps": "0"})
    assert str(caught.value) == "ini replio_max_steps = '0': 0 is less than 1"


def test_compare_wins_and_the_model_and_base_url_fill_bare_specs() -> None:
    options = read(
        {
            "replio_provider": spec_list("mock"),
            "replio_compare": spec_list("openai,ollama:q@http://gpu:11434"),
            "replio_model": "m",
            "replio_base_url": "http://local:8000/v1",
        }
    )
    assert options.specs == [
        ProviderSpec("openai", "m", "http://local:8000/v1"),
        ProviderSpec("ollama", "q", "http://gpu:11434"),
    ]


def test_concurrency_leaves_the_working_directory_alone() -> None:
    assert read({"replio_concurrency": 4}).settings.chdir is False
    assert read().settings.chdir is True


def test_fail_on_regression_needs_a_baseline() -> None:
    with pytest.raises(OptionError, match="needs --replio-baseline=PATH"):
        read({"replio_fail_on_regression": True})
