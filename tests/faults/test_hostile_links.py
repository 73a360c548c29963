"""A hostile (or broken) server may send a `_links` object with hundreds of thousands of
relations. The client reads `_links` one relation at a time (`_core.Links`) and caches relation
indexes per shape: both must stay linear in the number of relations, not quadratic. Run in a
child process with a generous deadline: a quadratic scan of 200,000 names takes minutes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    from recurring_payments.testing import FakeServer

    N = 200_000
    rels = ",".join(f'"r{i}": {{"href": "/t/{i}"}}' for i in range(N))
    embedded = ",".join(f'"e{i}": {{"n": {i}}}' for i in range(N))
    body = (
        '{"_links": {' + rels + ', "r7": {"href": "/again"}}, "_embedded": {' + embedded + '}}'
    ).encode()
    with FakeServer() as server, server.client(max_response_size=64 * 2**20) as client:
        server.respond_next(body, path="/huge")
        res = client.get(server.base_url + "/huge")
        assert len(res.links) == N
        assert res.links["r7"].href == "/again"  # a repeated relation keeps its last value
        assert res.links["r199999"].href == "/t/199999"
        assert "r150000" in res.links and "nope" not in res.links
        assert getattr(res, "r123456").href == "/t/123456"  # the relation index, built once
        assert res.embedded["e199999"]["n"] == 199999
        # Such a shape is indexed for its resource alone: the client's cache keeps small ones.
        assert len(res._session.rels) == 0
    print("ok")
    """
)


def test_a_links_object_of_200000_relations_is_read_in_linear_time() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=90, check=False
    )
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr[-2000:]
