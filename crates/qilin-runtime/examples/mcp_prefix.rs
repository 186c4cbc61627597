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
//! The file declares the servers as a workspace's `.qilin/mcp.yaml` does (`$REPO` standing
//! for the repository's root); it is copied into a temporary workspace, which the servers run
//! in.

use qilin_mcp::{McpClient, NoModel};
use qilin_runtime::{CodeSandbox, ModelChoice, Runtime};
use qilin_skill::{MCP_WORKSPACE_FILE, workspace_mcp_servers};
use qilin_store::{EventStore, MemoryStore};
use std::path::Path;
use std::sync::Arc;

const INSTRUCTIONS: &str = "Help the user with the tools you have.";

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
    let mut sizes = Vec::new();
    for (label, text) in agents {
        let path = workspace
            .path()
            .join(format!("{}.agent", label.replace(' ', "-")));
        std::fs::write(&path, text)?;
        let bytes = prefix_bytes(workspace.path(), &path).await?;
        println!("{label:>10}: {bytes} bytes of request prefix");
        sizes.push(bytes);
    }
    let saved = 100.0 * (1.0 - sizes[1] as f64 / sizes[0] as f64);
    println!("code mode sends {saved:.1}% fewer bytes");
    Ok(())
}

/// The bytes of the system prompt and the tools list (as JSON) of a session of `agent`.
async fn prefix_bytes(workspace: &Path, agent: &Path) -> anyhow::Result<usize> {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(store, CodeSandbox::InProcess);
    let handle = runtime
        .session(workspace)
        .agent_file(agent)
        // No bash tool is mounted; the sandbox's helper is not needed to measure.
        .no_sandbox(true)
        .model(ModelChoice::Provider {
            provider: Arc::new(NoModel),
            model: "none".to_string(),
            label: "none".to_string(),
        })
        .build()
        .await?;
    let prompt = handle.prompt();
    let system = prompt.system.len();
    let tools: Vec<String> = prompt
        .tools
        .iter()
        .map(|tool| {
            format!(
                "{} {}",
                tool.name,
                serde_json::to_string(tool).map_or(0, |t| t.len())
            )
        })
        .collect();
    eprintln!(
        "  system prompt {system} bytes; tools: {}",
        tools.join(", ")
    );
    let bytes = system + serde_json::to_string(&prompt.tools)?.len();
    handle.close().await?;
    Ok(bytes)
}
