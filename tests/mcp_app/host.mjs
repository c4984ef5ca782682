// The host side of an MCP App, as a chat client runs it, for test_mcp_app.py: the official
// ext-apps SDK's AppBridge (bundled by esbuild into /host.js). It lists the tools through its
// MCP connection (POST /rpc: the test's relay to `pg_todos mcp` over stdio or to /mcp of
// `pg_todos serve`), takes the first tool whose `_meta.ui.resourceUri` names a page (or the
// one named ?tool=), reads the page, calls the tool as the model would, and mounts the page in
// an `<iframe sandbox="allow-scripts">` by srcdoc, under the CSP its `_meta.ui.csp` declares.
// AppBridge answers the page's ui/initialize and forwards its tools/call and resources/read to
// the server; the result of the model's call goes to the page as ui/notifications/tool-result.
// What the test reads: window.hostState; what it does: window.hostTheme(theme),
// window.hostTeardown().
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const state = (window.hostState = {
  shownBy: null, resource: null, initialized: false, app: null, size: null, teardown: null, error: null,
});

/** One MCP request through the host's connection; `from` says who asked (host or app). */
async function rpc(from, method, params) {
  const response = await fetch("/rpc", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ from, method, params }),
  });
  const answer = await response.json();
  if (answer.error) throw new Error(answer.error.message);
  return answer.result;
}

/** The CSP a host puts on a page (SEP-1865, "Content Security Policy Enforcement"). */
function policy(csp) {
  const list = (domains, otherwise) => (domains && domains.length ? domains.join(" ") : otherwise);
  const resources = list(csp && csp.resourceDomains, "");
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `connect-src 'self' ${list(csp && csp.connectDomains, "")}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `frame-src ${list(csp && csp.frameDomains, "'none'")}`,
    "object-src 'none'",
    `base-uri ${list(csp && csp.baseUriDomains, "'self'")}`,
  ].join("; ");
}

/** The page's HTML with its CSP as the first element of its head. */
function withPolicy(html, csp) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(csp).replace(/"/g, "&quot;")}">`;
  return /<head[^>]*>/i.test(html) ? html.replace(/<head[^>]*>/i, (head) => head + meta) : meta + html;
}

async function main() {
  const query = new URLSearchParams(location.search);
  const { tools } = await rpc("host", "tools/list", {});
  const shown = tools.filter((t) => getToolUiResourceUri(t));
  state.shownBy = shown.map((t) => t.name);
  const tool = shown.find((t) => !query.get("tool") || t.name === query.get("tool"));
  if (!tool) throw new Error("no tool names a page");
  const uri = getToolUiResourceUri(tool);
  const { contents } = await rpc("host", "resources/read", { uri });
  const page = contents.find((c) => c.uri === uri);
  if (!page || page.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`${uri} is no ${RESOURCE_MIME_TYPE}`);
  state.resource = { uri, mimeType: page.mimeType, meta: page._meta || null };
  const input = {};
  const result = await rpc("host", "tools/call", { name: tool.name, arguments: input });

  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.title = tool.name;
  iframe.srcdoc = withPolicy(page.text, page._meta && page._meta.ui && page._meta.ui.csp);
  let context = { theme: query.get("theme") || "light", displayMode: "inline", availableDisplayModes: ["inline"] };
  const bridge = new AppBridge(
    null,
    { name: "pg_todos-test-host", version: "1.0.0" },
    { serverTools: {}, serverResources: {}, logging: {} },
    { hostContext: context },
  );
  bridge.oncalltool = (params) => rpc("app", "tools/call", params);
  bridge.onreadresource = (params) => rpc("app", "resources/read", params);
  bridge.onsizechange = ({ width, height }) => {
    state.size = { width, height };
    if (height) iframe.style.height = `${height}px`;
  };
  bridge.oninitialized = async () => {
    state.initialized = true;
    state.app = bridge.getAppVersion() || null;
    await bridge.sendToolInput({ arguments: input });
    await bridge.sendToolResult(result);
  };
  document.getElementById("chat").append(iframe);
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  window.hostTheme = (theme) => {
    context = { ...context, theme };
    bridge.setHostContext(context);
  };
  window.hostTeardown = async () => {
    state.teardown = await bridge.teardownResource({ reason: "the test closes the chat" });
  };
}

main().catch((e) => {
  state.error = String((e && e.stack) || e);
  document.getElementById("host-error").textContent = state.error;
});
