//! A session's MCP servers: connected when the session is built, listed for its prompt,
//! watched for changed tool lists (so the prompt is regenerated between turns, never within
//! one), and closed with it.

use crate::{
    GeneratedSkill, McpClient, McpError, McpTools, ServerSnapshot, generate_skill,
    register_server_tools,
};
use futures_util::future::join_all;
use qilin_skill::{
    AgentFile, AvailableSkills, GeneratedSkills, McpServer, SkillSet, mcp_skill_name,
};
use qilin_tool::{DirectDefinition, ToolRegistry};

/// The clients of one session's MCP servers. Cheap to clone.
#[derive(Clone, Default)]
pub struct McpConnections {
    clients: Vec<McpClient>,
}

impl McpConnections {
    /// Connects to every server at once. A server that does not start is kept, down, and
    /// tried again later ([`McpConnections::restart_due`], or a call of its tools);
    /// [`McpConnections::snapshots`] says what went wrong.
    pub async fn start(servers: &[McpServer]) -> McpConnections {
        let clients: Vec<McpClient> = servers.iter().cloned().map(McpClient::new).collect();
        join_all(clients.iter().map(McpClient::ensure_started)).await;
        McpConnections { clients }
    }

    /// Starts again every server that is down and has waited long enough since its last
    /// failed start (each at once); one that comes up marks its tool list changed, so the
    /// next [`McpConnections::take_changed`] remounts its tools. Called between turns.
    pub async fn restart_due(&self) {
        join_all(self.clients.iter().map(McpClient::ensure_started)).await;
    }

    /// The clients, in declaration order.
    pub fn clients(&self) -> &[McpClient] {
        &self.clients
    }

    /// The client of server `name`.
    pub fn client(&self, name: &str) -> Option<&McpClient> {
        self.clients.iter().find(|client| client.name() == name)
    }

    /// True when the session has no MCP servers.
    pub fn is_empty(&self) -> bool {
        self.clients.is_empty()
    }

    /// What each server offers now: listed from the running server (and kept as its snapshot
    /// in the workspace), or, for a server that is down, its last snapshot — so the prompt
    /// stays what it was while calls fail and the server is started again. A server down
    /// with no snapshot offers nothing yet; the notes say why.
    pub async fn snapshots(&self) -> (Vec<ServerSnapshot>, Vec<String>) {
        let listed = join_all(self.clients.iter().map(|client| async move {
            let server = client.server();
            match client.list().await {
                Ok(snapshot) => {
                    let kept = snapshot.write(&server.workspace).err();
                    (Some(snapshot), kept.map(|e| e.to_string()))
                }
                Err(error) => match ServerSnapshot::read(&server.workspace, &server.name) {
                    Ok(Some(snapshot)) => (
                        Some(snapshot),
                        Some(format!("{error}; its tools are described from its last listing, and its calls fail until it starts")),
                    ),
                    Ok(None) => (None, Some(format!("{error}; its tools are unavailable until it starts"))),
                    Err(read) => (None, Some(format!("{error}; {read}"))),
                },
            }
        }))
        .await;
        let mut snapshots = Vec::new();
        let mut notes = Vec::new();
        for (snapshot, note) in listed {
            snapshots.extend(snapshot);
            notes.extend(note);
        }
        (snapshots, notes)
    }

    /// True when a server said its tool list changed, or was started (again), since last asked.
    pub fn take_changed(&self) -> bool {
        // Every client's flag is taken, not only up to the first that changed.
        let mut changed = false;
        for client in &self.clients {
            changed |= client.take_tools_changed();
        }
        changed
    }

    /// Registers the tools of `snapshots` (code-mode-only but for each server's `direct`
    /// ones), each calling its server through this session's client.
    pub fn register(
        &self,
        registry: &mut ToolRegistry,
        snapshots: &[ServerSnapshot],
    ) -> Result<McpTools, McpError> {
        let mut all = McpTools::default();
        for snapshot in snapshots {
            let client = self.client(&snapshot.server);
            let direct = client
                .map(|c| c.server().direct.clone())
                .unwrap_or_default();
            let registered = register_server_tools(registry, snapshot, client, &direct)?;
            all.direct.extend(registered.direct);
            all.warnings.extend(registered.warnings);
        }
        Ok(all)
    }

    /// Ends every connection (and the processes of stdio servers).
    pub async fn close(&self) {
        join_all(self.clients.iter().map(McpClient::close)).await;
    }
}

/// The skills generated for `snapshots`, one per server, as a skill root's contents.
pub fn generated_skills(snapshots: &[ServerSnapshot]) -> GeneratedSkills {
    let mut skills = GeneratedSkills::new();
    for snapshot in snapshots {
        let GeneratedSkill { name, files } = generate_skill(snapshot);
        skills.insert(name, files);
    }
    skills
}

/// Lets an agent in code mode that names its skills (`skills.available: [...]`) still read
/// the skills generated for its MCP servers (those of `snapshots` found in `skills`).
pub fn add_server_skills(agent: &mut AgentFile, skills: &SkillSet, snapshots: &[ServerSnapshot]) {
    if !agent.code_mode {
        return;
    }
    if let AvailableSkills::Named(names) = &mut agent.available_skills {
        for snapshot in snapshots {
            let name = mcp_skill_name(&snapshot.server);
            if skills.get(&name).is_some() && !names.contains(&name) {
                names.push(name);
            }
        }
    }
}

/// Adds to `tools` (a tools list) the MCP tools mounted directly, `direct` (wire names, as
/// [`McpTools::direct`] gives them), each once.
pub fn add_direct_tools(
    tools: &mut Vec<DirectDefinition>,
    registry: &ToolRegistry,
    direct: &[String],
) {
    for name in direct {
        if let Some(definition) = registry.get(name).and_then(|tool| tool.direct_definition())
            && !tools.iter().any(|tool| &tool.name == name)
        {
            tools.push(definition);
        }
    }
}
