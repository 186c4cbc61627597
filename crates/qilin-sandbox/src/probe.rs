//! What the kernel lets the helper do, as found by trying it: the report a probe prints and
//! what Qilin concludes from it.

use serde::{Deserialize, Serialize};

/// Whether Landlock could confine a process, as the probe found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum LandlockSupport {
    /// Landlock confined the probe.
    Available {
        /// The ABI version in use (the lower of the kernel's and the one Qilin knows).
        abi: u32,
        /// Whether every restriction asked for was enforced (an older ABI enforces fewer:
        /// before ABI 3, truncating a file outside the writable folders is not refused).
        fully_enforced: bool,
    },
    /// The kernel has Landlock but it is not enabled at boot.
    NotEnabled,
    /// The kernel was built without Landlock (or is older than Linux 5.13).
    NotImplemented,
    /// Landlock refused the probe's rules.
    Failed {
        /// What it said.
        error: String,
    },
}

/// What a probe of the helper found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Support {
    /// Landlock, for the file system.
    pub landlock: LandlockSupport,
    /// Why new user, mount, PID and network namespaces (with read-only bind mounts and a
    /// loopback interface) could not be set up; `None` when they could.
    pub namespaces_error: Option<String>,
    /// Why the private `/dev` (with its own `devpts`) or the masks over the host's runtime
    /// folders could not be mounted in them; `None` when they could (or the namespaces failed
    /// first).
    #[serde(default)]
    pub mounts_error: Option<String>,
}

impl Support {
    /// True when a command can be fully confined.
    pub fn is_complete(&self) -> bool {
        self.missing().is_empty()
    }

    /// What is missing, each as a sentence naming the cause and where to look.
    pub fn missing(&self) -> Vec<String> {
        let mut missing = Vec::new();
        match &self.landlock {
            LandlockSupport::Available { .. } => {}
            LandlockSupport::NotEnabled => missing.push(
                "Landlock is built into this kernel but not enabled (add `landlock` to the \
                 `lsm=` kernel boot parameter)"
                    .to_string(),
            ),
            LandlockSupport::NotImplemented => missing.push(
                "this kernel has no Landlock (it needs Linux 5.13 or later built with \
                 CONFIG_SECURITY_LANDLOCK)"
                    .to_string(),
            ),
            LandlockSupport::Failed { error } => {
                missing.push(format!("Landlock refused the sandbox's rules: {error}"));
            }
        }
        if let Some(error) = &self.namespaces_error {
            missing.push(format!(
                "user namespaces are not available to this user: {error} (they may be limited \
                 by /proc/sys/user/max_user_namespaces or kernel.unprivileged_userns_clone, by \
                 an AppArmor or SELinux policy, or by a container's seccomp profile)"
            ));
        }
        if let Some(error) = &self.mounts_error {
            missing.push(format!(
                "the sandbox's private /dev or its masks over the host's runtime folders could \
                 not be mounted: {error} (a container may forbid mounting devpts or tmpfs)"
            ));
        }
        missing
    }

    /// One line naming what confines commands, e.g. `Landlock ABI 7 with user, mount, PID
    /// and network namespaces`.
    pub fn summary(&self) -> String {
        match (&self.landlock, &self.namespaces_error, &self.mounts_error) {
            (
                LandlockSupport::Available {
                    abi,
                    fully_enforced,
                },
                None,
                None,
            ) => {
                let partial = if *fully_enforced {
                    ""
                } else {
                    ", partly enforced"
                };
                format!("Landlock ABI {abi}{partial} with user, mount, PID and network namespaces")
            }
            _ => format!("incomplete: {}", self.missing().join("; ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_missing_is_named_with_where_to_look() {
        let full = Support {
            landlock: LandlockSupport::Available {
                abi: 7,
                fully_enforced: true,
            },
            namespaces_error: None,
            mounts_error: None,
        };
        assert!(full.is_complete());
        assert_eq!(
            full.summary(),
            "Landlock ABI 7 with user, mount, PID and network namespaces"
        );
        let none = Support {
            landlock: LandlockSupport::NotEnabled,
            namespaces_error: Some("unshare: ENOSPC: No space left on device".into()),
            mounts_error: None,
        };
        assert!(!none.is_complete());
        let missing = none.missing();
        assert_eq!(missing.len(), 2);
        assert!(missing[0].contains("lsm="), "{}", missing[0]);
        assert!(missing[1].contains("ENOSPC"), "{}", missing[1]);
        assert!(missing[1].contains("max_user_namespaces"), "{}", missing[1]);
        assert!(none.summary().starts_with("incomplete: "));
        let json = serde_json::to_string(&none).unwrap();
        assert_eq!(serde_json::from_str::<Support>(&json).unwrap(), none);
        let no_dev = Support {
            mounts_error: Some("cannot mount a devpts of its own on /dev/pts: EPERM".into()),
            ..full
        };
        assert_eq!(no_dev.missing().len(), 1);
        assert!(
            no_dev.missing()[0].contains("private /dev"),
            "{:?}",
            no_dev.missing()
        );
        assert!(no_dev.summary().starts_with("incomplete: "));
    }
}
