"""docs/configuration.md's tables of slots and settings say what the registries and declarations say."""

from __future__ import annotations

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.docs import CONFIGURATION, ENV_EXAMPLE, TABLES, env_example, generated, tables_in
from influencer_stats.settings import declared


def test_the_configuration_tables_are_the_generated_ones() -> None:
    text = CONFIGURATION.read_text()

    assert set(tables_in(text)) == set(TABLES), "a table's markers are missing from docs/configuration.md"
    assert text == generated(text), (
        "docs/configuration.md is stale: run python -m influencer_stats.config.docs"
    )


def test_the_tables_name_every_registered_choice_and_every_declared_variable() -> None:
    tables = tables_in(CONFIGURATION.read_text())

    for slot in SLOTS.values():
        assert all(f"`{name}`" in tables["choices"] for name in slot.names()), slot.name
    assert all(f"`{spec.env}`" in tables["settings"] for spec in declared().values())


def test_a_stale_table_is_caught_and_regenerated() -> None:
    text = CONFIGURATION.read_text()
    table = tables_in(text)["settings"]
    stale = text.replace(table, table.replace("| `", "| `OLD_", 1))

    assert stale != text
    assert generated(stale) == text


def test_the_env_example_lists_every_variable_at_its_default() -> None:
    text = ENV_EXAMPLE.read_text()

    assert text == env_example(), ".env.example is stale: run python -m influencer_stats.config.docs"
    assert all(f"# {spec.env}=" in text for spec in declared().values())
    assert all(f"# {slot.env}=" in text for slot in SLOTS.values())
