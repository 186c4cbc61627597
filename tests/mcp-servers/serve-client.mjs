// Drives `qilin mcp serve` with the official TypeScript SDK's client over stdio, as an MCP
// host would: the handshake, the tools list, a file tool, `run_code` calling Qilin's tools from
// Python, and calls Qilin refuses. Prints what it saw as one JSON object on stdout, for
// crates/qilin-cli/tests/mcp_npm.rs to check.
//
//   node tests/mcp-servers/serve-client.mjs QILIN_BINARY WORKSPACE
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [qilin, workspace] = process.argv.slice(2);
if (!qilin || !workspace) {
  console.error("usage: node serve-client.mjs QILIN_BINARY WORKSPACE");
  process.exit(2);
}

/** The text blocks of a tool result, joined. */
const text = (result) =>
  result.content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");

/** What a call answered: whether it failed, its text and its structured content. */
const call = async (client, name, args) => {
  const result = await client.callTool({ name, arguments: args });
  return {
    isError: result.isError === true,
    text: text(result),
    structured: result.structuredContent ?? null,
  };
};

const transport = new StdioClientTransport({
  command: qilin,
  args: ["mcp", "serve", "--workspace", workspace],
  stderr: "inherit",
});
const client = new Client({ name: "qilin-serve-test", version: "1.0.0" });
await client.connect(transport);

try {
  const server = client.getServerVersion();
  const { tools } = await client.listTools();
  const seen = {
    server: server?.name ?? null,
    instructions: client.getInstructions() ?? null,
    tools: tools.map((tool) => tool.name),
    described: tools.every((tool) => (tool.description ?? "").length > 0),
    read: await call(client, "read", { path: "notes.md" }),
    code: await call(client, "run_code", {
      code: [
        'text = sdk.tool.call("read", {"path": "notes.md"})',
        "try:",
        '    sdk.tool.call("read", {"path": "missing.md"})',
        "    missing = None",
        "except ToolError as e:",
        '    missing = sdk.tool.error(e)["code"]',
        'print("read from code")',
        '{"lines": len(text["text"].splitlines()), "missing": missing}',
      ].join("\n"),
    }),
    invalid: await call(client, "read", { no_such_argument: 1 }),
    refused: await call(client, "write", {
      path: ".qilin/planted.md",
      content: "not allowed",
    }),
    unknown: await call(client, "no_such_tool", {}),
  };
  process.stdout.write(`${JSON.stringify(seen)}\n`);
} finally {
  await client.close();
}
