"""A plain HTTP client (http.client) for checking the sandbox independently of our own client."""

from __future__ import annotations

import base64
import http.client
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from recurring_payments.testing import FakeServer

FORM = "application/x-www-form-urlencoded"


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


class Http:
    def __init__(self, server: FakeServer, timeout: float = 10.0):
        self.server = server
        self.timeout = timeout

    def connection(self) -> http.client.HTTPConnection:
        url = urlsplit(self.server.base_url)
        return http.client.HTTPConnection(url.hostname, url.port, timeout=self.timeout)

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        conn = self.connection()
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            data = response.read()
            names = {k.lower(): v for k, v in response.getheaders()}
            return Answer(response.status, names, data)
        finally:
            conn.close()

    def token_answer(
        self,
        scope: str = "api",
        user: str | None = None,
        password: str | None = None,
        headers: dict[str, str] | None = None,
        body: bytes | None = None,
    ) -> Answer:
        creds = self.server.credentials
        h = {
            "Accept": "application/json",
            "Authorization": basic(user or creds.app_name, password or creds.app_secret),
            "Content-Type": FORM,
        }
        h.update(headers or {})
        h = {k: v for k, v in h.items() if v is not None}
        data = body if body is not None else f"grant_type=client_credentials&scope={scope}".encode()
        return self.request("POST", "/oauth/token", data, h)

    def token(self, scope: str = "api", **kwargs: Any) -> str:
        answer = self.token_answer(scope, **kwargs)
        assert answer.status == 200, answer
        return str(answer.json["access_token"])

    def accept(self) -> str:
        return f'application/hal+json; profile="{self.server.profile}"'

    def api(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        content_type: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        h = {"Accept": self.accept(), "Authorization": f"Bearer {token or self.token()}"}
        data = body
        if body is not None and not isinstance(body, bytes):
            data = json.dumps(body).encode()
            h["Content-Type"] = (
                "application/json" if method == "POST" else ("application/merge-patch+json")
            )
        if content_type is not None:
            h["Content-Type"] = content_type
        h.update(headers or {})
        h = {k: v for k, v in h.items() if v is not None}
        return self.request(method, path, data, h)
