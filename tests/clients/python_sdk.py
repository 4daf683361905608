"""The official MCP Python SDK (mcp 2.3.0) against the relay, without a person.

It connects to ${TABRELAY_URL}/ with the SDK's OAuthClientProvider (dynamic registration, PKCE,
in-memory token storage). Its redirect handler opens the /authorize URL as a browser would
(the page, then its script's POST of the sealed request to /authorize/code for the code),
reads the connect code and the cookie from the waiting page, prints `CODE <code>` on stdout for
the approver (tests/e2e/python_sdk.test.mjs, whose tab approves it), and polls
/authorize/status with that cookie until the page says where to go; the callback handler
returns the code, state and iss of that redirect.

Then it lists the tools, calls `dataset_describe`, marks the access token expired (so the SDK
refreshes with its refresh token before the next request), calls `dataset_describe` again, and
prints one JSON line with the results. Diagnostics go to stderr.
"""

import asyncio
import hashlib
import json
import os
import re
import sys
import time
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

RELAY = os.environ["TABRELAY_URL"].rstrip("/")
CALLBACK = "http://127.0.0.1:9/callback"
APPROVAL_WAIT_S = float(os.environ.get("TABRELAY_APPROVAL_WAIT_S", "30"))


def log(*args: object) -> None:
    print("[python_sdk]", *args, file=sys.stderr, flush=True)


def fingerprint(secret: str | None) -> str | None:
    """A short hash, so tokens never reach the output."""
    return hashlib.sha256(secret.encode()).hexdigest()[:16] if secret else None


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None
        self.saves = 0

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.saves += 1

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class HeadlessBrowser:
    """The redirect and callback handlers: the waiting page, the connect code, the approval."""

    def __init__(self) -> None:
        self.redirect: str | None = None
        self.authorizations = 0

    async def redirect_handler(self, authorization_url: str) -> None:
        self.authorizations += 1
        async with httpx2.AsyncClient(follow_redirects=False, timeout=15) as http:
            page = await http.get(authorization_url)
            # What the page's script does: post the sealed request back for the connect code.
            sealed = re.search(r'data-request="([^"]*)"', page.text)
            if page.status_code != 200 or not sealed:
                raise RuntimeError(f"no waiting page ({page.status_code}): {page.text[:300]}")
            made = await http.post(f"{RELAY}/authorize/code", content=sealed.group(1))
            code = made.json().get("code") if made.status_code == 200 else None
            if not code:
                raise RuntimeError(f"no connect code ({made.status_code}): {made.text[:300]}")
            cookie = (made.headers.get("set-cookie") or "").split(";")[0]
            # The approver (the tab) reads this line and approves the code.
            print(f"CODE {code}", flush=True)
            deadline = time.monotonic() + APPROVAL_WAIT_S
            while True:
                r = await http.get(f"{RELAY}/authorize/status", params={"code": code}, headers={"cookie": cookie})
                status = r.json()
                if status.get("state") != "waiting":
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"connect code {code} not approved within {APPROVAL_WAIT_S} s")
                await asyncio.sleep(0.1)
            if status.get("state") != "approved" or not status.get("redirect"):
                raise RuntimeError(f"authorization not approved: {status}")
            self.redirect = status["redirect"]
            log("approved; redirect to", urlparse(self.redirect).path)

    async def callback_handler(self) -> AuthorizationCodeResult:
        if not self.redirect:
            raise RuntimeError("no redirect to read the authorization code from")
        query = parse_qs(urlparse(self.redirect).query)
        one = lambda k: query.get(k, [None])[0]  # noqa: E731
        return AuthorizationCodeResult(code=one("code"), state=one("state"), iss=one("iss"))


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def main() -> dict:
    storage = MemoryStorage()
    browser = HeadlessBrowser()
    oauth = OAuthClientProvider(
        server_url=f"{RELAY}/",
        client_metadata=OAuthClientMetadata(
            client_name="Python SDK e2e client",
            redirect_uris=[CALLBACK],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )
    out: dict = {"sdk": "mcp 2.3.0"}
    async with httpx2.AsyncClient(auth=oauth, timeout=httpx2.Timeout(30, read=300)) as http:
        async with streamable_http_client(f"{RELAY}/", http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                out["server"] = init.server_info.name
                out["protocol_version"] = init.protocol_version
                tools = await session.list_tools()
                out["tools"] = [t.name for t in tools.tools]
                first = await session.call_tool("dataset_describe", {})
                out["describe"] = {"is_error": bool(first.is_error), "text": text_of(first)}
                out["authorizations_before_refresh"] = browser.authorizations

                # Force one refresh: the access token's expiry is now in the past, so the SDK
                # uses its refresh token before the next request (as it would after an hour).
                before = storage.tokens
                assert before and before.refresh_token, "the SDK saved no refresh token"
                saves_before = storage.saves
                oauth.context.token_expiry_time = time.time() - 1
                second = await session.call_tool("dataset_describe", {})
                after = storage.tokens
                out["refresh"] = {
                    "refresh_token_before": fingerprint(before.refresh_token),
                    "refresh_token_after": fingerprint(after.refresh_token if after else None),
                    "refresh_token_changed": bool(after and after.refresh_token and after.refresh_token != before.refresh_token),
                    "access_token_changed": bool(after and after.access_token != before.access_token),
                    "tokens_saved": storage.saves - saves_before,
                    "second_call_ok": not second.is_error and text_of(second).startswith("<tabrelay-data>"),
                    "second_text": text_of(second),
                }
                out["authorizations"] = browser.authorizations
    return out


if __name__ == "__main__":
    try:
        result = asyncio.run(main())
    except BaseException as e:  # one JSON line either way, so the test can say what failed
        log("failed:", repr(e))
        print(json.dumps({"error": repr(e)}), flush=True)
        sys.exit(1)
    print(json.dumps(result), flush=True)
