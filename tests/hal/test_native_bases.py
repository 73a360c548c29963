"""The page's items and a rebuilt link are made natively: the native value placed in a new
object of the face's class, without running that class's `__new__`. That is only right for a
class that keeps the native base's `__new__`; any other is refused with a `TypeError`, never
given an object laid out for another `__new__`. A followed link's resource is made by its
class's `__new__` slot, without a Python frame either."""

from __future__ import annotations

import gc
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments import _core
from recurring_payments.testing import FakeServer


class OwnNewResource(rp.Resource):
    def __new__(cls, *args: Any, **kwargs: Any) -> OwnNewResource:
        raise AssertionError("never run: the maker refuses this class")


class OwnNewLink(rp.Link):
    def __new__(cls, *args: Any, **kwargs: Any) -> OwnNewLink:
        raise AssertionError("never run: the maker refuses this class")


def test_the_items_of_a_page_are_the_face_s_resources_holding_their_documents(
    server: FakeServer, client: rp.Client
) -> None:
    server.add_resource(
        "/bag",
        {
            "_embedded": {
                "things": [{"n": n, "_links": {"self": {"href": f"/t/{n}"}}} for n in range(3)]
            }
        },
    )
    items = client.get("/bag").embedded["things"]
    assert [type(item) for item in items] == [rp.Resource] * 3
    assert [item["n"] for item in items] == [0, 1, 2]
    assert [item.url for item in items] == [server.base_url + f"/t/{n}" for n in range(3)]
    assert not any(gc.is_tracked(item) for item in items)


def test_a_followed_link_makes_the_face_s_resource_with_its_status_and_headers(
    server: FakeServer, client: rp.Client
) -> None:
    server.add_resource("/one", {"n": 1, "_links": {"self": {"href": "/one"}}})
    followed = client.get("/one").links["self"]()
    assert type(followed) is rp.Resource
    assert (followed.status, followed["n"], followed.url) == (200, 1, server.base_url + "/one")
    assert followed.headers["content-type"].startswith("application/hal+json")
    assert not followed.partial


def test_a_class_that_overrides_new_is_refused_for_items() -> None:
    with pytest.raises(TypeError, match="OwnNewResource overrides __new__"):
        _core.resource_items(OwnNewResource, None, [{"n": 1}], (), False)


def test_a_class_that_is_not_a_native_resource_is_refused_for_items() -> None:
    with pytest.raises(TypeError, match="dict is not a native resource or link class"):
        _core.resource_items(dict, None, [{"n": 1}], (), False)


def test_a_link_class_that_overrides_new_is_refused(client: rp.Client) -> None:
    link = client.root().links["self"]
    with pytest.raises(TypeError, match="OwnNewLink overrides __new__"):
        OwnNewLink._plain(link._session, link.rel, link.href, link.templated)
