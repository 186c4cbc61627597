//! The environment a command gets: an allow-list of harmless variables from Qilin's own, the
//! variables the agent passes by name, and `TMPDIR` pointing at the session's private folder.
//! Everything else — API keys, tokens, cloud credentials — stays out.

use std::ffi::{OsStr, OsString};
use std::path::Path;

/// Variables every command gets from Qilin's environment when they are set.
pub const ALLOWED_VARIABLES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
];

/// Variables with this prefix pass too (the locale's `LC_ALL`, `LC_CTYPE`, ...).
const ALLOWED_PREFIX: &str = "LC_";

/// The variables a command runs with, in a stable order: those of `inherited` on the
/// allow-list or named in `pass`, then `TMPDIR` set to `temp_dir`.
pub fn command_environment(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    pass: &[String],
    temp_dir: &Path,
) -> Vec<(OsString, OsString)> {
    let allowed = |name: &OsStr| {
        name.to_str().is_some_and(|name| {
            name != "TMPDIR"
                && (ALLOWED_VARIABLES.contains(&name)
                    || name.starts_with(ALLOWED_PREFIX)
                    || pass.iter().any(|passed| passed == name))
        })
    };
    let mut variables: Vec<(OsString, OsString)> = inherited
        .into_iter()
        .filter(|(name, _)| allowed(name))
        .collect();
    variables.sort();
    variables.push(("TMPDIR".into(), temp_dir.as_os_str().to_owned()));
    variables
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn secrets_stay_out_and_named_variables_pass() {
        let inherited = vars(&[
            ("PATH", "/usr/bin"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("AWS_SECRET_ACCESS_KEY", "aws"),
            ("LC_ALL", "C.UTF-8"),
            ("NPM_TOKEN", "npm"),
            ("TMPDIR", "/shared/tmp"),
            ("HOME", "/home/me"),
        ]);
        let env = command_environment(inherited, &["NPM_TOKEN".to_string()], Path::new("/private"));
        assert_eq!(
            env,
            vars(&[
                ("HOME", "/home/me"),
                ("LC_ALL", "C.UTF-8"),
                ("NPM_TOKEN", "npm"),
                ("PATH", "/usr/bin"),
                ("TMPDIR", "/private"),
            ])
        );
    }
}
