//! The Landlock rules: read and run anything, write only in the writable folders, reach no
//! process or abstract socket outside the sandbox and, with the network, connect to no port of
//! Qilin's own servers.

use super::HelperError;
use crate::SandboxMode;
use crate::probe::LandlockSupport;
use crate::request::Confinement;
use landlock::{
    ABI, Access, AccessFs, AccessNet, LandlockStatus, NetPort, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetError, RulesetStatus, Scope, path_beneath_rules,
};
use std::path::{Path, PathBuf};

/// The newest Landlock ABI the rules are written for; an older kernel enforces what it can.
const TARGET_ABI: ABI = ABI::V7;

/// Device files every command may write (and read) besides the writable folders, all in its
/// private `/dev`. `/dev/tty` opens only the command's own controlling terminal, which exists
/// only in a terminal; `/dev/pts` holds the pseudo-terminals the command opens itself; `/dev/shm`
/// is its private shared memory.
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/tty",
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/pts",
    "/dev/shm",
];

/// Confines this process (and every process it starts) with Landlock, and sets
/// `no_new_privs`; `devices` (a command's own terminal) stay writable too. With the network
/// and refused ports, TCP connections to those ports are refused (Landlock ABI 4, Linux 6.7;
/// its rules only allow, so every other port is allowed one by one). Returns what the kernel
/// enforced, which is nothing unless [`LandlockSupport::Available`].
pub(crate) fn confine(
    confinement: &Confinement,
    devices: &[PathBuf],
) -> Result<LandlockSupport, HelperError> {
    let handled = AccessFs::from_all(TARGET_ABI);
    let mut writable: Vec<&Path> = vec![&confinement.temp_dir];
    if confinement.mode == SandboxMode::WorkspaceWrite {
        writable.push(&confinement.workspace);
    }
    let refused = &confinement.refused_ports;
    let refuse_ports = confinement.network && !refused.is_empty();
    let mut ruleset = Ruleset::default()
        .handle_access(handled)?
        .scope(Scope::from_all(TARGET_ABI))?;
    if refuse_ports {
        ruleset = ruleset.handle_access(AccessNet::ConnectTcp)?;
    }
    let mut created = ruleset.create()?;
    if refuse_ports {
        created = created.add_rules(
            (0..=u16::MAX)
                .filter(|port| !refused.contains(port))
                .map(|port| Ok::<_, RulesetError>(NetPort::new(port, AccessNet::ConnectTcp))),
        )?;
    }
    let status = created
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(TARGET_ABI)))?
        .add_rules(path_beneath_rules(WRITABLE_DEVICES, handled))?
        .add_rules(path_beneath_rules(devices, handled))?
        .add_rules(path_beneath_rules(writable, handled))?
        .no_new_privs(true)
        .restrict_self()?;
    Ok(match (status.ruleset, status.landlock) {
        (RulesetStatus::NotEnforced, LandlockStatus::NotEnabled) => LandlockSupport::NotEnabled,
        (RulesetStatus::NotEnforced, _) => LandlockSupport::NotImplemented,
        (ruleset, LandlockStatus::Available { effective_abi, .. }) => LandlockSupport::Available {
            abi: effective_abi as u32,
            fully_enforced: ruleset == RulesetStatus::FullyEnforced,
        },
        (_, _) => LandlockSupport::NotImplemented,
    })
}

/// Confines this process, or fails when the kernel would enforce nothing.
pub(crate) fn confine_or_fail(
    confinement: &Confinement,
    devices: &[PathBuf],
) -> Result<(), HelperError> {
    match confine(confinement, devices)? {
        LandlockSupport::Available { .. } => Ok(()),
        _ => Err(HelperError::NotEnforced),
    }
}
