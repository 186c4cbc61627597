//! The shells the tools run — bash, and PowerShell where it is installed — and how each is
//! driven: the command line of a one-off command, the program kept running between calls,
//! and the line that runs one call's script in it and then prints that call's end marker.

use std::ffi::OsString;
use std::path::Path;

/// A shell program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ShellKind {
    /// GNU bash: the `bash` tool.
    Bash,
    /// PowerShell 7 (`pwsh`): the `pwsh` tool, registered only where it is installed.
    Pwsh,
}

impl ShellKind {
    /// The tool's name, which is also the program's.
    pub fn tool_name(self) -> &'static str {
        match self {
            ShellKind::Bash => "bash",
            ShellKind::Pwsh => "pwsh",
        }
    }

    /// The language a client highlights the command in.
    pub(crate) fn language(self) -> &'static str {
        match self {
            ShellKind::Bash => "bash",
            ShellKind::Pwsh => "powershell",
        }
    }

    /// The command line that runs `command` once.
    pub(crate) fn one_off(self, command: &str) -> Vec<OsString> {
        match self {
            ShellKind::Bash => vec!["bash".into(), "-c".into(), command.into()],
            ShellKind::Pwsh => vec![
                "pwsh".into(),
                "-NoLogo".into(),
                "-NoProfile".into(),
                "-NonInteractive".into(),
                "-Command".into(),
                command.into(),
            ],
        }
    }

    /// The command line of a shell kept running between calls, reading its commands from
    /// stdin (a pipe: no prompts, no line editing).
    pub(crate) fn persistent(self) -> Vec<OsString> {
        match self {
            ShellKind::Bash => vec![
                "bash".into(),
                "--noprofile".into(),
                "--norc".into(),
                "-s".into(),
            ],
            ShellKind::Pwsh => vec![
                "pwsh".into(),
                "-NoLogo".into(),
                "-NoProfile".into(),
                "-NonInteractive".into(),
                "-Command".into(),
                "-".into(),
            ],
        }
    }

    /// The file a persistent shell named `shell` reads each call's command from.
    pub(crate) fn script_name(self, shell: &str) -> String {
        match self {
            ShellKind::Bash => format!("qilin-shell-{shell}"),
            ShellKind::Pwsh => format!("qilin-pwsh-{shell}.ps1"),
        }
    }

    /// The line written to a persistent shell for one call: run the call's script in the
    /// shell itself (so `cd`, variables and functions stay), with stdin closed, then print
    /// `marker` with the script's exit status and the working directory.
    ///
    /// In bash the script is sourced under a SIGINT trap that returns from it, so an interrupt
    /// stops the rest of the script as Ctrl-C stops a command line, and the shell lives on.
    /// The trap is set anew at every call: bash runs a trap only once more after a `return`
    /// from it, until the trap is set again.
    pub(crate) fn driver(self, script: &Path, marker: &Marker) -> String {
        let script = script.to_string_lossy();
        match self {
            ShellKind::Bash => format!(
                "builtin trap 'return 130 2>/dev/null' INT; builtin . {} </dev/null; \
                 builtin printf '%s%d:%s%s\\n' {} \"$?\" \"$PWD\" {}\n",
                bash_quote(&script),
                bash_quote(&marker.open),
                bash_quote(&marker.close)
            ),
            ShellKind::Pwsh => format!(
                "$global:LASTEXITCODE = 0; $__qilin_ok = $false; try {{ . {}; $__qilin_ok = $? }} \
                 catch {{ Write-Error $_ }} finally {{ $__qilin_code = if ($global:LASTEXITCODE) \
                 {{ $global:LASTEXITCODE }} elseif ($__qilin_ok) {{ 0 }} else {{ 1 }}; \
                 [Console]::Out.Write({} + $__qilin_code + ':' + $PWD.Path + {} + \"`n\"); \
                 [Console]::Out.Flush() }}\n",
                pwsh_quote(&script),
                pwsh_quote(&marker.open),
                pwsh_quote(&marker.close)
            ),
        }
    }
}

/// `text` as one bash word, in single quotes.
fn bash_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `text` as a PowerShell literal string, in single quotes.
fn pwsh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Whether `program` is an executable file in one of the `PATH` folders.
pub(crate) fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|folder| {
        std::fs::metadata(folder.join(program))
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    })
}

/// The end of one call's output: `OPEN<status>:<working directory>CLOSE` and a newline, both
/// halves holding a random nonce the command cannot know, so text a command prints that
/// looks like a marker never ends its output early.
#[derive(Debug, Clone)]
pub(crate) struct Marker {
    open: String,
    close: String,
}

/// What the marker said when it came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MarkerSeen {
    /// The script's exit status.
    pub status: Option<i32>,
    /// The shell's working directory after it.
    pub cwd: String,
    /// Output that followed the marker (from processes still running in the shell).
    pub rest: Vec<u8>,
}

impl Marker {
    /// A marker with a new nonce.
    pub fn new() -> Marker {
        let nonce = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        Marker {
            open: format!("__qilin_end_{nonce}:"),
            close: format!(":{nonce}_qilin_end__"),
        }
    }
}

/// Finds a marker in a stream of output, handing back the output before it as it comes.
pub(crate) struct MarkerScanner {
    marker: Marker,
    held: Vec<u8>,
    opened: bool,
}

impl MarkerScanner {
    /// A scanner looking for `marker`.
    pub fn new(marker: Marker) -> MarkerScanner {
        MarkerScanner {
            marker,
            held: Vec::new(),
            opened: false,
        }
    }

    /// Feeds a chunk; returns the output known to come before the marker, and the marker
    /// once it has come whole.
    pub fn push(&mut self, chunk: &[u8]) -> (Vec<u8>, Option<MarkerSeen>) {
        self.held.extend_from_slice(chunk);
        let mut output = Vec::new();
        if !self.opened {
            let open = self.marker.open.as_bytes();
            match find(&self.held, open) {
                Some(at) => {
                    output = self.held[..at].to_vec();
                    self.held.drain(..at + open.len());
                    self.opened = true;
                }
                None => {
                    let keep = partial_suffix(&self.held, open);
                    output = self.held.drain(..self.held.len() - keep).collect();
                    return (output, None);
                }
            }
        }
        let close = format!("{}\n", self.marker.close);
        let Some(at) = find(&self.held, close.as_bytes()) else {
            return (output, None);
        };
        let body = String::from_utf8_lossy(&self.held[..at]).into_owned();
        let rest = self.held[at + close.len()..].to_vec();
        self.held.clear();
        let (status, cwd) = body.split_once(':').unwrap_or((body.as_str(), ""));
        let seen = MarkerSeen {
            status: status.trim().parse().ok(),
            cwd: cwd.to_string(),
            rest,
        };
        (output, Some(seen))
    }

    /// The bytes held back (a possible start of the marker), as output after all.
    pub fn held(&self) -> &[u8] {
        if self.opened { &[] } else { &self.held }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// The length of the longest end of `held` that begins `open`.
fn partial_suffix(held: &[u8], open: &[u8]) -> usize {
    (1..open.len().min(held.len() + 1))
        .rev()
        .find(|&n| held.ends_with(&open[..n]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_ends_the_output_exactly_even_when_split_across_chunks() {
        let marker = Marker::new();
        let whole = format!("no newline{}7:/w/src{}\nlater", marker.open, marker.close);
        for cut in 0..whole.len() {
            let mut scanner = MarkerScanner::new(marker.clone());
            let (mut output, seen) = scanner.push(&whole.as_bytes()[..cut]);
            let (seen, unread) = match seen {
                // What the first chunk did not hold follows the marker too.
                Some(seen) => (Some(seen), &whole.as_bytes()[cut..]),
                None => {
                    let (more, seen) = scanner.push(&whole.as_bytes()[cut..]);
                    output.extend(more);
                    (seen, &b""[..])
                }
            };
            assert_eq!(output, b"no newline", "cut at {cut}");
            let mut seen = seen.expect("the marker is found");
            assert_eq!(seen.status, Some(7));
            assert_eq!(seen.cwd, "/w/src");
            seen.rest.extend_from_slice(unread);
            assert_eq!(seen.rest, b"later", "cut at {cut}");
        }
    }

    #[test]
    fn a_look_alike_marker_stays_output() {
        let marker = Marker::new();
        let mut scanner = MarkerScanner::new(marker);
        let fake = "__qilin_end_0000000000000000:0:/tmp:0000_qilin_end__\n";
        let (output, seen) = scanner.push(fake.as_bytes());
        assert!(seen.is_none());
        let mut all = output;
        all.extend_from_slice(scanner.held());
        assert_eq!(all, fake.as_bytes());
    }

    #[test]
    fn the_driver_quotes_what_it_names() {
        let marker = Marker::new();
        let line = ShellKind::Bash.driver(Path::new("/tmp/it's"), &marker);
        assert!(
            line.contains(r"builtin . '/tmp/it'\''s' </dev/null"),
            "{line}"
        );
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
        let line = ShellKind::Pwsh.driver(Path::new("/tmp/it's.ps1"), &marker);
        assert!(line.contains(". '/tmp/it''s.ps1'"), "{line}");
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
    }
}
