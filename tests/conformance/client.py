"""The conformance client: drives the official MCP conformance suite's client scenarios with mini-claude's public API.

    python tests/conformance/client.py <server-url>

The harness sets MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and (for some scenarios)
MCP_CONFORMANCE_CONTEXT. This file holds no protocol logic: it builds a server config the way a user would write it
(the context's credentials become `oauth` settings), connects with the package's transport/auth/client stack, and
then does what a user of a host does — list and call the tools (with the given or schema-derived arguments), list
and read resources, list and get prompts, list skills and (for the verify-* scenarios) load them. Server → client
requests are answered as a consenting user would: elicitation accepted with the schema's defaults, sampling with a
short canned reply, roots with the working directory. Authorization is completed headlessly by following the
authorization endpoint's redirect `Location` instead of a browser.

Exit status: 0 when every step worked, 1 when one failed (the harness allows that for the scenarios where the
client must refuse something), 2 for bad usage.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # runnable as a plain script from anywhere
    sys.path.insert(0, str(ROOT))

from mini_claude.errors import McpError  # noqa: E402
from mini_claude.mcp.client import McpClient  # noqa: E402
from mini_claude.mcp.config import ServerConfig  # noqa: E402
from mini_claude.mcp.connect import build_transport  # noqa: E402
from mini_claude.mcp.elicitation import schema_defaults  # noqa: E402
from mini_claude.mcp.protocol import McpTool  # noqa: E402

log = logging.getLogger("conformance")

CONNECT_TIMEOUT_S = 20.0
CALL_TIMEOUT_S = 20.0
REDIRECT_URI = "http://localhost:3000/callback"
# The client-ID metadata document (CIMD) URL this client would publish; used only where the AS supports CIMD
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


class HeadlessAuthorizer:
    """An `Authorizer` without a browser: GET the authorization URL and return the query of its redirect."""

    redirect_uri = REDIRECT_URI

    async def authorize(self, authorization_url: str) -> Mapping[str, str]:
        import httpx

        async with httpx.AsyncClient(follow_redirects=False, timeout=10.0) as http:
            response = await http.get(authorization_url)
        location = response.headers.get("location")
        if not location:
            raise RuntimeError(f"authorization endpoint answered HTTP {response.status_code} without a redirect")
        return dict(parse_qsl(urlsplit(location).query))


def oauth_settings(context: Mapping[str, Any]) -> dict[str, Any]:
    """The `oauth` object a user would write for the credentials the harness hands out."""
    oauth: dict[str, Any] = {"clientMetadataUrl": CLIENT_METADATA_URL}
    if "idp_id_token" in context:  # enterprise-managed authorization (SEP-990)
        oauth["clientId"] = context["client_id"]
        oauth["clientSecret"] = context.get("client_secret")
        oauth["enterprise"] = {
            "idpIssuer": context.get("idp_issuer"),
            "idpTokenEndpoint": context.get("idp_token_endpoint"),
            "idpClientId": context.get("idp_client_id"),
            "idToken": context["idp_id_token"],
        }
    elif "valid_jwt" in context:  # workload identity: a JWT from the platform is the grant
        oauth.update(clientId=context["client_id"], grantType="jwt_bearer", assertion=context["valid_jwt"])
    elif "private_key_pem" in context:
        oauth.update(clientId=context["client_id"], grantType="client_credentials",
                     privateKey=context["private_key_pem"],
                     signingAlgorithm=context.get("signing_algorithm", "ES256"))
    elif "client_id" in context:
        oauth["clientId"] = context["client_id"]
        if context.get("client_secret"):
            oauth["clientSecret"] = context["client_secret"]
        if str(context.get("name", "")).startswith("auth/client-credentials"):
            oauth["grantType"] = "client_credentials"
    return {k: v for k, v in oauth.items() if v is not None}


def placeholder_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments for a tool the scenario did not give any for: defaults, else one valid value per required field."""
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    arguments = dict(schema_defaults(schema))
    for name in required:
        if name in arguments or not isinstance(properties.get(name), dict):
            continue
        arguments[name] = _example(properties[name])
    return arguments


def _example(prop: Mapping[str, Any]) -> Any:
    if "default" in prop:
        return prop["default"]
    if isinstance(prop.get("enum"), list) and prop["enum"]:
        return prop["enum"][0]
    kind = prop.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return {"string": "test", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}.get(
        kind if isinstance(kind, str) else "string", "test")


async def answer_elicitation(params: Any) -> dict[str, Any]:
    schema = params.get("requestedSchema") if isinstance(params, dict) else None
    return {"action": "accept", "content": schema_defaults(schema) if isinstance(schema, dict) else {}}


async def answer_sampling(params: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "conformance-client",
            "stopReason": "endTurn"}


async def answer_roots(params: Any) -> dict[str, Any]:
    return {"roots": [{"uri": Path.cwd().as_uri(), "name": "cwd"}]}


class Run:
    """One scenario run: every step's failure is reported on stderr and makes the exit status 1."""

    def __init__(self, url: str, env: Mapping[str, str]) -> None:
        self.url = url
        self.scenario = env.get("MCP_CONFORMANCE_SCENARIO", "")
        self.version = env.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None
        raw = env.get("MCP_CONFORMANCE_CONTEXT") or "{}"
        self.context: dict[str, Any] = json.loads(raw)
        self.env = env
        self.failures = 0

    def failed(self, what: str, exc: BaseException) -> None:
        self.failures += 1
        print(f"conformance client: {what}: {exc}", file=sys.stderr)

    async def main(self) -> int:
        cfg = ServerConfig(name="conformance", type="http", url=self.url, oauth=oauth_settings(self.context),
                           protocol_version=self.version, source="conformance")
        transport = build_transport(cfg, self.env, authorizer=HeadlessAuthorizer())
        client = McpClient(transport, name="conformance", protocol_version=self.version)
        client.set_request_handler("elicitation/create", answer_elicitation)
        client.set_request_handler("sampling/createMessage", answer_sampling)
        client.set_request_handler("roots/list", answer_roots)
        try:
            await client.connect(timeout_s=CONNECT_TIMEOUT_S)
        except McpError as exc:
            self.failed("connect", exc)
            await client.close()
            return 1
        try:
            await self.exercise(client)
        finally:
            await client.close()
        return 1 if self.failures else 0

    async def exercise(self, client: McpClient) -> None:
        capabilities = client.server_capabilities
        if "tools" in capabilities or not capabilities:
            await self.tools(client)
        if "resources" in capabilities:
            await self.resources(client)
        if "prompts" in capabilities:
            await self.prompts(client)
        extensions = capabilities.get("extensions")
        if isinstance(extensions, dict) and "io.modelcontextprotocol/skills" in extensions:
            await self.skills(client)

    async def tools(self, client: McpClient) -> None:
        try:
            tools = await client.list_tools()
        except McpError as exc:
            self.failed("tools/list", exc)
            return
        by_name: dict[str, McpTool] = {tool.name: tool for tool in tools}
        calls = self.tool_calls(tools, by_name)
        for name, arguments in calls:
            if name not in by_name:
                self.failed(f"tools/call {name}", LookupError("the server did not list it (or it was refused)"))
                continue
            try:
                result = await client.call_tool(name, arguments, timeout_s=CALL_TIMEOUT_S)
            except McpError as exc:
                self.failed(f"tools/call {name}", exc)
                continue
            text = " ".join(str(b.get("text", "")) for b in result.content if b.get("type") == "text")
            print(f"{name}: {'error: ' if result.is_error else ''}{text[:200]}")

    def tool_calls(self, tools: list[McpTool], by_name: Mapping[str, McpTool]) -> list[tuple[str, dict[str, Any]]]:
        """What the scenario asks to call: the context's toolCalls, a scenario's own request, else every tool."""
        given = self.context.get("toolCalls")
        if isinstance(given, list):
            return [(c["name"], c.get("arguments") or {}) for c in given if isinstance(c, dict) and "name" in c]
        if self.scenario == "json-schema-ref-no-deref":
            return []  # the scenario's server only lists tools; what is checked is that nothing was fetched
        if self.scenario == "json-schema-2020-12-preservation" and "json_schema_echo" in by_name:
            # the echo tool asks for the inputSchema the client observed for the other tool, passed back verbatim
            observed = [t for t in tools if t.name != "json_schema_echo"]
            return [("json_schema_echo", {"schema": t.input_schema}) for t in observed[:1]]
        return [(tool.name, placeholder_arguments(tool.input_schema)) for tool in tools]

    async def resources(self, client: McpClient) -> None:
        try:
            resources = await client.list_resources()
        except McpError as exc:
            self.failed("resources/list", exc)
            return
        for resource in resources:
            uri = resource.get("uri")
            if isinstance(uri, str) and not uri.startswith("skill://"):
                try:
                    await client.read_resource(uri)
                except McpError as exc:
                    self.failed(f"resources/read {uri}", exc)

    async def prompts(self, client: McpClient) -> None:
        try:
            prompts = await client.list_prompts()
        except McpError as exc:
            self.failed("prompts/list", exc)
            return
        for prompt in prompts:
            name = prompt.get("name")
            if not isinstance(name, str):
                continue
            arguments = {a["name"]: "test" for a in prompt.get("arguments") or []
                         if isinstance(a, dict) and a.get("required") and isinstance(a.get("name"), str)}
            try:
                await client.get_prompt(name, arguments)
            except McpError as exc:
                self.failed(f"prompts/get {name}", exc)

    async def skills(self, client: McpClient) -> None:
        from mini_claude.mcp.skills import McpSkill, list_skills

        try:
            entries = await list_skills(client)
        except McpError as exc:
            self.failed("skills/list", exc)
            return
        if not self.scenario.startswith("sep-2640-client-verify"):
            return  # listing alone must fetch nothing (skills load on use)
        for entry in entries:  # the user asks for each skill, then for each of its files
            skill = McpSkill(client, entry)
            try:
                await skill.load()
                for file in entry.files or ():
                    if file.uri != entry.uri:
                        await skill.read_file(file.uri)
            except McpError as exc:
                self.failed(f"skill {entry.name}", exc)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: client.py <server-url>", file=sys.stderr)
        return 2
    logging.basicConfig(level=os.environ.get("CONFORMANCE_LOG", "WARNING"), stream=sys.stderr,
                        format="%(name)s: %(message)s")
    # a fresh user each run: tokens and registrations of other runs (the harness reuses ports) must not leak in
    with tempfile.TemporaryDirectory(prefix="mini-claude-conformance-") as state:
        env = {**os.environ, "MINI_CLAUDE_STATE_DIR": state}
        return asyncio.run(Run(argv[1], env).main())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
