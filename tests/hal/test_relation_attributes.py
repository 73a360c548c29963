"""`res.<name>`: the resource's own attributes (methods, properties, a subclass's attributes)
first, and only when there is none of that name, the relation it stands for; on both faces."""

from __future__ import annotations

import asyncio
import copy
import pickle
from collections.abc import Mapping
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer

# Relations named like members of a resource, one plain relation, two embedded ones.
DOCUMENT = {
    "name": "odd",
    "_links": {
        "self": {"href": "/odd"},
        "get": {"href": "/get"},
        "url": {"href": "/url"},
        "links": {"href": "/links"},
        "keys": {"href": "/keys"},
        "status": {"href": "/status"},
        "creditor": {"href": "/creditors/c-1"},
        "shadowed": {"href": "/shadowed"},
        "broken": {"href": "/broken"},
    },
    "_embedded": {
        "owner": {"name": "owner", "_links": {"self": {"href": "/owner"}}},
        "things": [{"n": 1}, {"n": 2}],
    },
}

FACES = ["sync", "async"]


def fetched(server: FakeServer, face: str, path: str = "/odd") -> rp.Resource | rp.AsyncResource:
    """The resource at `path` read through a client of `face` (closed again: attribute reads
    of a resource send nothing)."""
    if face == "sync":
        with server.client() as client:
            return client.get(path)

    async def read() -> rp.AsyncResource:
        async with server.async_client() as client:
            return await client.get(path)

    return asyncio.run(read())


def link_type(face: str) -> type[Any]:
    return rp.Link if face == "sync" else rp.AsyncLink


@pytest.mark.parametrize("face", FACES)
def test_a_relation_named_like_a_member_leaves_the_member(server: FakeServer, face: str) -> None:
    server.add_resource("/odd", DOCUMENT)
    res = fetched(server, face)
    assert res.get("name") == "odd" and res.get("nope", 7) == 7  # the method
    assert res.url == server.base_url + "/odd"  # the property
    assert isinstance(res.links, Mapping) and "creditor" in res.links
    assert list(res.keys()) == ["name"]
    assert res.status == 200
    # The relations stay reachable through the maps.
    for rel in ("get", "url", "links", "keys", "status"):
        assert res.links[rel].href == "/" + rel
    creditor = res.creditor
    assert type(creditor) is link_type(face) and creditor.href.endswith("/creditors/c-1")
    assert res.creditor is creditor is res.links["creditor"]


@pytest.mark.parametrize("face", FACES)
def test_embedded_relations_read_as_attributes(server: FakeServer, face: str) -> None:
    server.add_resource("/odd", DOCUMENT)
    res = fetched(server, face)
    owner = res.owner
    assert type(owner) is type(res) and owner["name"] == "owner" and owner.partial
    assert res.owner is owner  # kept
    things = res.things
    assert [t["n"] for t in things] == [1, 2]
    assert res.things is not things  # an array is a new list on each read


@pytest.mark.parametrize("face", FACES)
def test_a_missing_name_is_a_link_not_found_error(server: FakeServer, face: str) -> None:
    server.add_resource("/odd", DOCUMENT)
    res = fetched(server, face)
    assert not hasattr(res, "nope") and getattr(res, "nope", 7) == 7
    assert not hasattr(res, "name")  # the state is not an attribute
    with pytest.raises(rp.LinkNotFoundError) as caught:
        res.creditorr  # noqa: B018
    message = str(caught.value)
    assert message.startswith("no relation 'creditorr' in this resource")
    assert "did you mean 'creditor'?" in message
    assert isinstance(caught.value, AttributeError) and isinstance(caught.value, KeyError)
    # A lone surrogate names no relation.
    assert not hasattr(res, "x\udc80")
    with pytest.raises(rp.LinkNotFoundError):
        getattr(res, "get_\ud800")


@pytest.mark.parametrize("face", FACES)
def test_private_names_are_never_relations(server: FakeServer, face: str) -> None:
    server.add_resource("/odd", {**DOCUMENT, "_links": {"_hidden": {"href": "/h"}}})
    res = fetched(server, face)
    for name in ("_hidden", "_nope", "__nope__", "_\ud800"):
        assert not hasattr(res, name)
        with pytest.raises(AttributeError) as caught:
            getattr(res, name)
        assert type(caught.value) is AttributeError, name
    assert res.links["_hidden"].href.endswith("/h")


@pytest.mark.parametrize("face", FACES)
def test_a_subclass_sees_its_own_attributes_first(server: FakeServer, face: str) -> None:
    server.add_resource("/odd", DOCUMENT)
    base = rp.Resource if face == "sync" else rp.AsyncResource

    class Mine(base):  # type: ignore[valid-type,misc]
        creditor = "the class's"

        @property
        def broken(self) -> str:
            raise AttributeError("inside the property")

        @property
        def failing(self) -> str:
            raise ValueError("not an AttributeError")

        @property
        def missing(self) -> str:
            raise AttributeError("inside the property")

    res = fetched(server, face)
    mine = Mine(res._session, res._doc)
    mine.shadowed = "the instance's"
    assert mine.creditor == "the class's" and mine.shadowed == "the instance's"
    assert mine.links["creditor"].href.endswith("/creditors/c-1")
    # A property raising AttributeError gives way to the relation of its name, if any.
    assert type(mine.broken) is link_type(face) and mine.broken.href.endswith("/broken")
    with pytest.raises(rp.LinkNotFoundError, match="no relation 'missing'"):
        mine.missing  # noqa: B018
    with pytest.raises(ValueError, match="not an AttributeError"):
        mine.failing  # noqa: B018
    assert mine.owner["name"] == "owner" and type(mine.owner) is Mine


@pytest.mark.parametrize("face", FACES)
def test_copies_and_pickles_read_their_relations(server: FakeServer, face: str) -> None:
    server.add_resource("/odd", DOCUMENT)
    res = fetched(server, face)
    res.creditor  # noqa: B018 (kept by the original: its copies make their own)
    for other in (copy.copy(res), copy.deepcopy(res), pickle.loads(pickle.dumps(res))):
        assert type(other) is type(res)
        assert other.creditor.href == res.creditor.href and other.creditor is not res.creditor
        assert other.owner["name"] == "owner" and other.get("name") == "odd"


@pytest.mark.parametrize("face", FACES)
def test_dir_lists_members_and_relations(server: FakeServer, face: str) -> None:
    server.add_resource("/odd", DOCUMENT)
    names = dir(fetched(server, face))
    assert {"get", "url", "links", "keys", "fetch", "creditor", "owner", "things"} <= set(names)
    assert names == sorted(names)


@pytest.mark.parametrize("face", FACES)
def test_the_types_own_lookup_answers_relations(server: FakeServer, face: str) -> None:
    """No `__getattr__` runs after a failed lookup: CPython raises and formats an
    AttributeError before each call of one. The resource classes' `__getattribute__` answers
    relations itself."""
    server.add_resource("/odd", DOCUMENT)
    res = fetched(server, face)
    cls = type(res)
    assert not any("__getattr__" in vars(c) for c in cls.__mro__)
    assert cls.__getattribute__(res, "creditor") is res.creditor
    assert cls.__getattribute__(res, "get")("name") == "odd"
    with pytest.raises(rp.LinkNotFoundError):
        cls.__getattribute__(res, "nope")
