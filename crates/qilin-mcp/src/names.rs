//! Tool names in Qilin's registry: `server__tool`, in the form every provider accepts.

use sha2::{Digest, Sha256};

/// The longest tool name providers accept.
const MAX_NAME: usize = 64;

/// The wire name of tool `tool` of server `server`: `server__tool`, each character providers
/// refuse (anything but ASCII letters, digits, `_`, `-`) written `_`, and a name over 64
/// characters cut with a short hash of the whole so it stays unique.
pub fn tool_wire_name(server: &str, tool: &str) -> String {
    let cleaned: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("{server}__{cleaned}");
    if name.len() <= MAX_NAME {
        return name;
    }
    let digest = Sha256::digest(format!("{server}__{tool}").as_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}_{hash}", &name[..MAX_NAME - hash.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_namespaced_and_what_providers_accept() {
        assert_eq!(tool_wire_name("fs", "read_file"), "fs__read_file");
        assert_eq!(tool_wire_name("fs", "files.read/v2"), "fs__files_read_v2");
        let long = tool_wire_name("server", &"x".repeat(80));
        assert_eq!(long.len(), 64);
        assert_ne!(long, tool_wire_name("server", &"x".repeat(81)));
    }
}
