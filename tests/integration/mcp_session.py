"""An MCP client session with the official MCP Python SDK, for the tests of the pg_todos MCP
server: over stdio (`Stdio`: a `pg_todos mcp` process) or over Streamable HTTP (`Http`: `/mcp`
of `pg_todos serve`, with a bearer token). Both are async context managers with the same
calls:
  names()            the tool names tools/list gives
  call(name, args)   (structured content, is the result an error, the text the model reads)
  answer(name, args) (structured content or else the text, is error)
  raw(name, args)    the whole CallToolResult
`on_message` (an async function of each message the server sends unasked: notifications)
goes to the SDK's ClientSession as its message handler.
"""
import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation

from web import libpq_env


def text(result):
    """The text the model reads: the result's text content."""
    return "".join(c.text for c in result.content if c.type == "text")


class Session:
    """What both transports share; a subclass opens `self._transport` in `_open`."""

    def __init__(self, client, on_message=None):
        self.client = client
        self.on_message = on_message
        self._closers = []

    async def __aenter__(self):
        read, write = await self._open()
        extra = {"message_handler": self.on_message} if self.on_message else {}
        self._session = ClientSession(read, write, client_info=Implementation(name=self.client, version="1.0"), **extra)
        self.session = await self._session.__aenter__()
        self._closers.insert(0, self._session)
        await self.session.initialize()
        return self

    async def __aexit__(self, *exc):
        for c in self._closers:
            await c.__aexit__(*exc)
        self._closers = []

    async def _enter(self, context):
        got = await context.__aenter__()
        self._closers.insert(0, context)
        return got

    async def names(self):
        return [t.name for t in (await self.session.list_tools()).tools]

    async def raw(self, name, args):
        return await self.session.call_tool(name, args)

    async def call(self, name, args):
        r = await self.raw(name, args)
        return r.structured_content, bool(r.is_error), text(r)

    async def answer(self, name, args):
        r = await self.raw(name, args)
        return r.structured_content if r.structured_content is not None else text(r), bool(r.is_error)

    async def call_or_error(self, name, args):
        """`call`, or (None, True, the error) when no MCP result came (an HTTP error status,
        which the SDK raises)."""
        try:
            return await self.call(name, args)
        except MCPError as e:
            return None, True, repr(e)


class Stdio(Session):
    """A `binary mcp ARGS` process on database `db` as `user`, started in directory `cwd`
    (its project), with extra environment variables `env`."""

    def __init__(self, binary, db, *args, cwd, client="mcp-test-client", user="agent_login", on_message=None, **env):
        super().__init__(client, on_message)
        self.params = StdioServerParameters(command=binary, args=["mcp", *args], env=libpq_env(db, user, **env), cwd=cwd)

    async def _open(self):
        return await self._enter(stdio_client(self.params))


class Http(Session):
    """A session with the MCP endpoint at `address` with bearer token `tok` and extra headers."""

    def __init__(self, address, tok, headers=None, client="mcp-http-test"):
        super().__init__(client)
        self.address = address
        self.headers = {"Authorization": f"Bearer {tok}", **(headers or {})}

    async def _open(self):
        http = await self._enter(httpx2.AsyncClient(headers=self.headers, timeout=30))
        read, write, *_ = await self._enter(streamable_http_client(self.address, http_client=http))
        return read, write
