"""An mcpkit client program for the conformance suite's `auth/*` client scenarios.

    node conformance/dist/index.js client --requirements 2026-07-28 \
        --command "python tests/auth/client/conformance_auth_client.py"

The suite appends the server URL and names the scenario in `MCP_CONFORMANCE_SCENARIO`; some
scenarios pass what a real deployment would configure in `MCP_CONFORMANCE_CONTEXT`
(pre-registered `client_id`/`client_secret` and the `issuer` they belong to, or a
`private_key_pem` for private_key_jwt; a workload JWT; an ID token and the identity
provider to exchange it at). The program is a plain user of `Client` with
`OAuth` in headless mode: it lists the tools and calls each one. Its client metadata document
URL is the one the suite's authorization servers expect for this client. It exits 1 (with the
error on stderr) when the connection or authorization fails, as the scenarios that test a
refusal expect.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any

from mcpkit import Client
from mcpkit.auth.client import (
    ClientCredentials,
    ClientMetadata,
    Headless,
    IdJagExchange,
    OAuth,
)
from mcpkit.client import HTTPOptions
from mcpkit.errors import MCPError

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def oauth_for(scenario: str, context: dict[str, Any]) -> OAuth:
    metadata = ClientMetadata(client_name="mcpkit-conformance", metadata_url=CLIENT_METADATA_URL)
    if scenario.startswith("auth/client-credentials"):
        credentials = ClientCredentials(
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            private_key=context.get("private_key_pem"),
            signing_algorithm=context.get("signing_algorithm"),
        )
        return OAuth(client=credentials, grant="client_credentials")
    if scenario == "auth/wif-jwt-bearer":
        workload = ClientCredentials(client_id=context["client_id"])
        token = context["valid_jwt"]
        return OAuth(client=workload, grant="jwt_bearer", assertion=lambda issuer, resource: token)
    if scenario in ("auth/enterprise-managed-authorization", "auth/cross-app-access-complete-flow"):
        exchange = IdJagExchange(
            context["idp_token_endpoint"], context["idp_id_token"], context["idp_client_id"]
        )
        client = ClientCredentials(context["client_id"], context["client_secret"])
        return OAuth(client=client, grant="jwt_bearer", assertion=exchange)
    credentials = None
    if "client_id" in context:
        credentials = ClientCredentials(
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            issuer=context.get("issuer"),
        )
    return OAuth(client=credentials, metadata=metadata, approval=Headless())


async def main(url: str) -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    logging.getLogger("mcpkit.client").setLevel(logging.DEBUG)  # why the era probe fell back
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    auth = oauth_for(scenario, context)
    try:
        async with Client(url, timeout=90, http=HTTPOptions(auth=auth)) as client:
            print("era:", client.era, client.protocol_version, file=sys.stderr)
            for tool in await client.list_all_tools():
                print(await client.call_tool(tool.name, {}))
    except MCPError as exc:
        print(f"failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1])))
