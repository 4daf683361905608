"""The official MCP Python SDK's stdio client (mcp 2.3.0) starting tabrelay-local, as an agent
app on the person's computer does.

It starts ${TABRELAY_LOCAL_BIN} with the arguments in ${TABRELAY_LOCAL_ARGS} (JSON) and its
state directory ${TABRELAY_LOCAL_STATE}, calls the
status tool and prints `CODE <connect code>` from its sentence for the approver
(tests/e2e/local_python.test.mjs, whose tab approves it), waits for the server's
notifications/tools/list_changed (it is connected), lists the tools, calls `dataset_describe`
and prints one JSON line with the results. Diagnostics go to stderr.
"""

import asyncio
import json
import os
import re
import sys

from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

APPROVAL_WAIT_S = float(os.environ.get("TABRELAY_APPROVAL_WAIT_S", "30"))


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def main() -> dict:
    server = StdioServerParameters(
        command=os.environ["TABRELAY_LOCAL_BIN"],
        args=json.loads(os.environ["TABRELAY_LOCAL_ARGS"]),
        env={"TABRELAY_LOCAL_STATE": os.environ["TABRELAY_LOCAL_STATE"]},
    )
    async with stdio_client(server) as (read, write):
        info = types.Implementation(name="Python SDK agent", version="1.0.0")
        connected = asyncio.Event()

        async def heard(message: object) -> None:
            if getattr(message, "method", None) == "notifications/tools/list_changed":
                connected.set()

        async with ClientSession(read, write, client_info=info, message_handler=heard) as session:
            await session.initialize()
            said = text_of(await session.call_tool("status", {}))
            code = re.search(r"connect code ([0-9A-Z]{5}-[0-9A-Z]{5})", said)
            if not code:
                return {"error": f"no code in: {said}"}
            print(f"CODE {code.group(1)}", flush=True)
            await asyncio.wait_for(connected.wait(), APPROVAL_WAIT_S)
            tools = await session.list_tools()
            described = await session.call_tool("dataset_describe", {})
            return {
                "tools": sorted(t.name for t in tools.tools),
                "isError": bool(described.is_error),
                "text": text_of(described),
            }


if __name__ == "__main__":
    try:
        result = asyncio.run(main())
    except Exception as e:  # noqa: BLE001: the test reads the line
        print(f"[local_stdio] {e!r}", file=sys.stderr, flush=True)
        result = {"error": repr(e)}
    print(json.dumps(result), flush=True)
