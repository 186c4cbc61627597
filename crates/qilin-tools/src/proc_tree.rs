//! The host's view of the process tree, read from `/proc`: which processes a persistent shell
//! started since a command began, so an interrupt can end them and leave the shell running.
//!
//! Sandboxed processes live in a PID namespace of their own, but the host sees them all with
//! its own process ids and parents, so the tree reads the same in every sandbox mode.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::collections::{BTreeSet, HashMap};

/// A process as one moment of the table saw it: its id and its start time (clock ticks after
/// boot), which together name it even if the id is later reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ProcessId {
    /// When it started, in clock ticks after boot (first, so a sort puts the oldest first).
    pub start: u64,
    /// Its id, in the host's PID namespace.
    pub pid: i32,
}

/// Every process's parent, read once.
pub(crate) struct ProcessTable {
    parent: HashMap<i32, (i32, u64)>,
}

impl ProcessTable {
    /// Reads the table from `/proc`; processes that end while it is read are left out.
    pub fn read() -> ProcessTable {
        let mut parent = HashMap::new();
        if let Ok(entries) = std::fs::read_dir("/proc") {
            for entry in entries.flatten() {
                let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                    continue;
                };
                if let Some((ppid, start)) = stat(pid) {
                    parent.insert(pid, (ppid, start));
                }
            }
        }
        ProcessTable { parent }
    }

    /// The direct children of `pid`, oldest first.
    pub fn children(&self, pid: i32) -> Vec<ProcessId> {
        let mut children: Vec<ProcessId> = self
            .parent
            .iter()
            .filter(|(_, (ppid, _))| *ppid == pid)
            .map(|(child, (_, start))| ProcessId {
                start: *start,
                pid: *child,
            })
            .collect();
        children.sort_unstable();
        children
    }

    /// `pid` and every process below it.
    pub fn subtree(&self, pid: i32) -> Vec<i32> {
        let mut found = vec![pid];
        let mut next = 0;
        while next < found.len() {
            let current = found[next];
            found.extend(self.children(current).into_iter().map(|child| child.pid));
            next += 1;
        }
        found
    }

    /// The subtrees of `shell`'s children that are not in `before`: what it started since.
    pub fn started_since(&self, shell: i32, before: &BTreeSet<ProcessId>) -> Vec<i32> {
        self.children(shell)
            .into_iter()
            .filter(|child| !before.contains(child))
            .flat_map(|child| self.subtree(child.pid))
            .collect()
    }
}

/// Sends `signal` to each of `pids`; a process already gone is skipped.
pub(crate) fn signal_all(pids: &[i32], signal: Signal) {
    for pid in pids {
        let _ = kill(Pid::from_raw(*pid), signal);
    }
}

/// The parent and start time of `pid`, from `/proc/PID/stat`. Its second field, the command
/// name in parentheses, may hold spaces and parentheses itself, so the fields are counted
/// from the last `)`.
fn stat(pid: i32) -> Option<(i32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3rd field of the file), parent (4th) ... start time (22nd).
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_and_its_child_are_found_with_their_start_times() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let table = ProcessTable::read();
        let me = std::process::id() as i32;
        let children = table.children(me);
        let found = children
            .iter()
            .find(|c| c.pid == child.id() as i32)
            .copied();
        assert!(found.is_some(), "{children:?}");
        assert!(table.subtree(me).contains(&(child.id() as i32)));
        let before: BTreeSet<ProcessId> = children.iter().copied().collect();
        assert!(table.started_since(me, &before).is_empty());
        assert!(
            table
                .started_since(me, &BTreeSet::new())
                .contains(&(child.id() as i32))
        );
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
