"""The few GitHub REST calls `mcp-codegen ci` makes: find its pull-request comment by a hidden marker, create it
once, update it on later runs. Every call is bounded (timeout, pages, one retry on 5xx or a timeout, a deadline
for the whole exchange); a failure is a value with a message that never contains the token.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import httpx

TIMEOUT = 15.0  # seconds per request
DEADLINE = 60.0  # seconds for everything one run sends
MAX_PAGES = 20  # of 100 comments each: a pull request with more than 2,000 comments gets a new one
MAX_COMMENT = 65_000  # GitHub refuses comment bodies over 65,536 characters
RETRY_STATUS = frozenset({500, 502, 503, 504})


@dataclass(frozen=True)
class ApiFailure:
    status: int | None  # None: no HTTP answer (timeout, connection refused)
    message: str


@dataclass
class GitHub:
    api_url: str
    repository: str  # owner/name
    token: str = field(repr=False)
    started: float = field(default_factory=time.monotonic)

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response | ApiFailure:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "mcp-codegen-ci",
            "Authorization": f"Bearer {self.token}",
        }
        url = self.api_url.rstrip("/") + path
        failure = ApiFailure(None, "not sent")
        for attempt in range(2):
            left = DEADLINE - (time.monotonic() - self.started)
            if left <= 1:
                return ApiFailure(None, f"{method} {path}: gave up after {DEADLINE:.0f} s of API calls")
            try:
                response = httpx.request(
                    method, url, headers=headers, timeout=min(TIMEOUT, left), follow_redirects=False, **kwargs
                )
            except httpx.TimeoutException:
                failure = ApiFailure(None, f"{method} {path}: no answer within {min(TIMEOUT, left):.0f} s")
                continue
            except httpx.HTTPError as exc:
                return ApiFailure(None, self.redact(f"{method} {path}: {type(exc).__name__}: {exc}"))
            if response.status_code in RETRY_STATUS and attempt == 0:
                failure = ApiFailure(response.status_code, f"{method} {path}: HTTP {response.status_code}")
                time.sleep(1.0)
                continue
            if response.status_code >= 400:
                return ApiFailure(
                    response.status_code, f"{method} {path}: HTTP {response.status_code}{self._why(response)}"
                )
            return response
        return failure

    def _why(self, response: httpx.Response) -> str:
        try:
            message = response.json().get("message")
        except (ValueError, AttributeError):
            return ""
        return f" ({self.redact(str(message)[:200])})" if message else ""

    def redact(self, text: str) -> str:
        return text.replace(self.token, "***") if self.token else text

    def find_comment(self, number: int, marker: str) -> int | None | ApiFailure:
        """The id of the first comment on the pull request whose body starts with `marker`."""
        for page in range(1, MAX_PAGES + 1):
            response = self._request(
                "GET", f"/repos/{self.repository}/issues/{number}/comments", params={"per_page": 100, "page": page}
            )
            if isinstance(response, ApiFailure):
                return response
            try:
                comments = response.json()
            except ValueError:
                return ApiFailure(response.status_code, "listing comments: the answer is not JSON")
            if not isinstance(comments, list):
                return ApiFailure(response.status_code, "listing comments: the answer is not a list")
            for comment in comments:
                if isinstance(comment, dict) and str(comment.get("body", "")).startswith(marker):
                    identifier = comment.get("id")
                    if isinstance(identifier, int):
                        return identifier
            if len(comments) < 100:
                return None
        return None

    def upsert_comment(self, number: int, marker: str, body: str) -> str | ApiFailure:
        """Create the comment, or update the one an earlier run made; 'created' or 'updated'."""
        found = self.find_comment(number, marker)
        if isinstance(found, ApiFailure):
            return found
        if found is None:
            response = self._request("POST", f"/repos/{self.repository}/issues/{number}/comments", json={"body": body})
            return response if isinstance(response, ApiFailure) else "created"
        response = self._request("PATCH", f"/repos/{self.repository}/issues/comments/{found}", json={"body": body})
        return response if isinstance(response, ApiFailure) else "updated"
