"""`recurring_payments._core.RelIndex` on the relations of the recorded entry point."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from recurring_payments import LinkNotFoundError
from recurring_payments._core import RelIndex

NAMESPACE = "https://api.slimpay.net/alps#"
RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "recorded"


def recorded_rels(name: str) -> list[str]:
    exchange = json.loads((RECORDED / name).read_text(encoding="utf-8"))
    return list(exchange["response"]["body"]["_links"])


ENTRY_POINT = recorded_rels("entry-point.json")
SHORT_NAMES = [rel.removeprefix(NAMESPACE) for rel in ENTRY_POINT if rel.startswith(NAMESPACE)]


@pytest.fixture(params=[NAMESPACE, None], ids=["namespace", "inferred"])
def index(request: pytest.FixtureRequest) -> RelIndex:
    return RelIndex(ENTRY_POINT, [], request.param)


def test_the_recording_has_44_relations() -> None:
    assert len(ENTRY_POINT) == 44
    assert len(SHORT_NAMES) == 42
    assert ENTRY_POINT[:2] == ["self", "profile"]


@pytest.mark.parametrize("short", SHORT_NAMES)
def test_every_relation_by_full_short_and_attribute_name(index: RelIndex, short: str) -> None:
    rel = NAMESPACE + short
    for name in (rel, short, short.replace("-", "_")):
        assert index.resolve(name) == rel
        assert index.find(name) == rel
    assert index.short_name(rel) == short


def test_iana_rels_as_they_are(index: RelIndex) -> None:
    assert index.resolve("self") == "self"
    assert index.find("profile") == "profile"
    assert index.short_name("self") == "self"


def test_attribute_names_for_completion(index: RelIndex) -> None:
    names = index.attribute_names()
    assert names == sorted(names)
    assert "get_creditors" in names and "self" in names
    assert len(names) == 44
    assert all(name.isidentifier() for name in names)


def test_missing_name() -> None:
    index = RelIndex(ENTRY_POINT, [], NAMESPACE)
    assert index.find("get_creditorz") is None
    with pytest.raises(LinkNotFoundError) as caught:
        index.resolve("get_creditorz")
    message = str(caught.value)
    assert message.startswith("no relation 'get_creditorz' in this resource;")
    assert "did you mean 'get_creditors'?" in message
    assert "available: create_card_transactions, " in message
    assert message.endswith(" and 24 more")
    # The documented bases, so `getattr(res, name, None)` and `res.links.get(name)` work.
    assert isinstance(caught.value, AttributeError)
    assert isinstance(caught.value, KeyError)
    with pytest.raises(AttributeError):
        index.resolve("get_creditorz")
    with pytest.raises(KeyError):
        index.resolve("get_creditorz")


def test_ambiguous_name_names_both_rels() -> None:
    other = "https://partner.example/rels#get-creditors"
    index = RelIndex([*ENTRY_POINT, other], [], None)
    for name in ("get-creditors", "get_creditors"):
        with pytest.raises(LinkNotFoundError, match="ambiguous") as caught:
            index.resolve(name)
        assert f"'{NAMESPACE}get-creditors'" in str(caught.value)
        assert f"'{other}'" in str(caught.value)
        with pytest.raises(LinkNotFoundError):
            index.find(name)
    assert index.resolve(other) == other
    assert index.resolve(NAMESPACE + "get-creditors") == NAMESPACE + "get-creditors"
    assert "get_creditors" not in index.attribute_names()
    assert index.short_name(other) == other
    # With the namespace configured, the partner's rel has no short name: no ambiguity.
    index = RelIndex([*ENTRY_POINT, other], [], NAMESPACE)
    assert index.resolve("get_creditors") == NAMESPACE + "get-creditors"


def test_curies_both_ways() -> None:
    index = RelIndex(["self", "sp:get-creditors"], [("sp", NAMESPACE + "{rel}")])
    assert index.resolve(NAMESPACE + "get-creditors") == "sp:get-creditors"
    assert index.resolve("sp:get-creditors") == "sp:get-creditors"
    assert index.resolve("get_creditors") == "sp:get-creditors"
    index = RelIndex([NAMESPACE + "get-creditors"], [("sp", NAMESPACE + "{rel}")])
    assert index.resolve("sp:get-creditors") == NAMESPACE + "get-creditors"


def test_order_created_relations() -> None:
    index = RelIndex(recorded_rels("order-created.json"), [], None)
    assert index.resolve("user_approval") == NAMESPACE + "user-approval"
    assert index.resolve("extended-user-approval") == NAMESPACE + "extended-user-approval"
    assert index.find("get_creditors") is None
    with pytest.raises(LinkNotFoundError, match="did you mean 'get_creditor'"):
        index.resolve("get_creditors")


def test_arguments_are_checked() -> None:
    with pytest.raises(TypeError):
        RelIndex("self")  # a str is a Sequence[str], but not a list of rels
    with pytest.raises((TypeError, ValueError)):  # pyo3 says ValueError for a wrong length
        RelIndex(["self"], [("ex",)])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        RelIndex([1])  # type: ignore[list-item]
    assert RelIndex(("self",)).resolve("self") == "self"
    assert RelIndex([]).find("self") is None


def test_immutable_and_shared_between_threads() -> None:
    index = RelIndex(ENTRY_POINT, [], NAMESPACE)
    with pytest.raises(AttributeError):
        index.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError):

        class Sub(RelIndex):  # type: ignore[misc]
            pass

    results: list[str] = []

    def work() -> None:
        for _ in range(200):
            results.append(index.resolve("get_mandates"))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [NAMESPACE + "get-mandates"] * 800
    assert repr(index) == "<RelIndex of 44 relations>"
