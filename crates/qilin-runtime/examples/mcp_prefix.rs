//! Measures what MCP tools cost every request: the bytes of the request prefix (system prompt
//! and tools list, as a provider receives them) for one agent mounting every tool of the
//! declared MCP servers directly, and for the same agent in code mode, where the tools are
//! learned from the generated skills in the catalog and called from `run_code`.
//!
//! ```text
//! npm ci --prefix tests/mcp-servers
//! cargo run -p qilin-runtime --example mcp_prefix -- tests/mcp-servers/measure.yaml
//! ```
//!
//! It prints where the bytes are (the system prompt's parts, each tool definition) and the
//! servers' own part: their tools' definitions against their skills' catalog lines.
//!
//! The file declares the servers as a workspace's `.qilin/mcp.yaml` does (`$REPO` standing
//! for the repository's root); it is copied into a temporary workspace, which the servers run
//! in.

use qilin_mcp::McpClient;
use qilin_runtime::{CodeSandbox, Runtime};
use qilin_skill::{MCP_WORKSPACE_FILE, workspace_mcp_servers};
use qilin_store::{EventStore, MemoryStore};
use std::path::Path;
use std::sync::Arc;

const INSTRUCTIONS: &str = "Help the user with the tools you have.";
const CATALOG_OPEN: &str = "<available-skills>";
const CATALOG_CLOSE: &str = "</available-skills>";
const ENVIRONMENT_OPEN: &str = "<environment>";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let Some(declarations) = std::env::args().nth(1) else {
        anyhow::bail!("usage: mcp_prefix path/to/mcp.yaml");
    };
    let workspace = tempfile::tempdir()?;
    let file = workspace.path().join(MCP_WORKSPACE_FILE);
    std::fs::create_dir_all(file.parent().expect("the file has a folder"))?;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()?;
    let text = std::fs::read_to_string(&declarations)?;
    std::fs::write(&file, text.replace("$REPO", &repo.display().to_string()))?;
    let (servers, diagnostics) = workspace_mcp_servers(workspace.path());
    if let Some(error) = diagnostics.iter().find(|d| d.is_error()) {
        anyhow::bail!("{error}");
    }

    // Every tool of every server, by its own name, to mount them all directly.
    let mut direct = String::new();
    let mut listed = String::new();
    let mut count = 0;
    for server in &servers {
        let client = McpClient::connect(server.clone()).await?;
        let snapshot = client.list().await?;
        client.close().await;
        let names: Vec<String> = snapshot.tools.iter().map(|t| t.name.to_string()).collect();
        count += names.len();
        direct.push_str(&format!(
            "  {}:\n    direct: [{}]\n",
            server.name,
            names.join(", ")
        ));
        listed.push_str(&format!("  {}: {{}}\n", server.name));
    }
    let agents = [
        (
            "direct",
            format!(
                "name: direct\ninstructions: {INSTRUCTIONS}\ntools: []\nskills:\n  available: []\nmcp_servers:\n{direct}"
            ),
        ),
        (
            "code mode",
            format!(
                "name: coded\ninstructions: {INSTRUCTIONS}\ntools: []\ncode_mode: true\nskills:\n  available: []\nmcp_servers:\n{listed}"
            ),
        ),
    ];
    println!("{} MCP server(s), {count} tool(s)", servers.len());
    let mut measured = Vec::new();
    for (label, text) in agents {
        let path = workspace
            .path()
            .join(format!("{}.agent", label.replace(' ', "-")));
        std::fs::write(&path, text)?;
        let prefix = prefix(workspace.path(), &path).await?;
        println!("\n{label}: {} bytes of request prefix", prefix.total());
        prefix.print();
        measured.push(prefix);
    }
    let (direct, coded) = (&measured[0], &measured[1]);
    let fewer = |before: usize, after: usize| 100.0 * (1.0 - after as f64 / before as f64);
    println!(
        "\ncode mode sends {:.1}% fewer bytes ({} vs {})",
        fewer(direct.total(), coded.total()),
        coded.total(),
        direct.total()
    );
    let servers_direct: usize = direct.tools.iter().map(|(_, bytes)| bytes).sum();
    let servers_coded: usize = coded
        .catalog
        .iter()
        .filter(|(name, _)| name.starts_with("mcp-"))
        .map(|(_, bytes)| bytes)
        .sum();
    println!(
        "the servers' own part: {servers_coded} bytes of catalog lines vs {servers_direct} bytes of tool definitions ({:.1}% fewer)",
        fewer(servers_direct, servers_coded)
    );
    println!(
        "paid once by the code-mode agent, whatever its servers: {} bytes (its tools list and the catalog's frame)",
        coded.total() - servers_coded - coded.instructions - coded.rest
    );
    Ok(())
}

/// Where the bytes of a request prefix are: the system prompt's parts and each tool
/// definition (as JSON, as the provider receives it).
struct Prefix {
    /// The agent's instructions (and anything before the catalog).
    instructions: usize,
    /// Each catalog line, by skill name (`(frame)` for the catalog's opening and closing).
    catalog: Vec<(String, usize)>,
    /// The rest of the system prompt (the session's environment block).
    rest: usize,
    /// Each tool definition, by name.
    tools: Vec<(String, usize)>,
    /// The tools list's own brackets and commas.
    list_punctuation: usize,
}

impl Prefix {
    fn total(&self) -> usize {
        self.instructions
            + self.catalog.iter().map(|(_, bytes)| bytes).sum::<usize>()
            + self.rest
            + self.tools.iter().map(|(_, bytes)| bytes).sum::<usize>()
            + self.list_punctuation
    }

    fn print(&self) {
        println!("  system prompt:");
        println!("    {:>6}  instructions", self.instructions);
        for (name, bytes) in &self.catalog {
            println!("    {bytes:>6}  catalog: {name}");
        }
        if self.rest > 0 {
            println!("    {:>6}  the session's environment block", self.rest);
        }
        println!("  tools list:");
        for (name, bytes) in &self.tools {
            println!("    {bytes:>6}  {name}");
        }
        println!(
            "    {:>6}  the list's brackets and commas",
            self.list_punctuation
        );
    }
}

/// The request prefix of a session of `agent`: its system prompt and tools list.
async fn prefix(workspace: &Path, agent: &Path) -> anyhow::Result<Prefix> {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(store, CodeSandbox::InProcess);
    let prompt = runtime
        .session(workspace)
        .agent_file(agent)
        .prompt()
        .await?
        .prompt;
    let system = prompt.system.as_str();
    let (instructions, catalog, rest) =
        match (system.find(CATALOG_OPEN), system.find(CATALOG_CLOSE)) {
            (Some(open), Some(close)) => {
                let end = close + CATALOG_CLOSE.len();
                let mut lines = Vec::new();
                let mut frame = 0;
                for line in system[open..end].split_inclusive('\n') {
                    match line.strip_prefix("- ").and_then(|l| l.split_once(':')) {
                        Some((name, _)) => lines.push((name.to_string(), line.len())),
                        None => frame += line.len(),
                    }
                }
                lines.insert(0, ("(frame)".to_string(), frame));
                (open, lines, system.len() - end)
            }
            _ => {
                let open = system.find(ENVIRONMENT_OPEN).unwrap_or(system.len());
                (open, Vec::new(), system.len() - open)
            }
        };
    let tools: Vec<(String, usize)> = prompt
        .tools
        .iter()
        .map(|tool| Ok((tool.name.clone(), serde_json::to_string(tool)?.len())))
        .collect::<Result<_, serde_json::Error>>()?;
    let list = serde_json::to_string(&prompt.tools)?.len();
    let list_punctuation = list - tools.iter().map(|(_, bytes)| bytes).sum::<usize>();
    Ok(Prefix {
        instructions,
        catalog,
        rest,
        tools,
        list_punctuation,
    })
}
