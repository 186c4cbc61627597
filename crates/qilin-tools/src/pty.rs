//! Pseudo-terminals: a pair whose secondary side a program gets as its terminal, and whose
//! primary side Qilin reads (the program's screen output, in a thread) and writes (its keys,
//! off the runtime's threads).

use rustix::pty::{OpenptFlags, grantpt, ioctl_tiocgptpeer, openpt, unlockpt};
use rustix::termios::{InputModes, OptionalActions, Winsize, tcgetattr, tcsetattr, tcsetwinsize};
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// A new pseudo-terminal: the primary side, ready for async reads and writes, and the
/// secondary side to give a program.
pub(crate) struct PtyPair {
    /// Qilin's side.
    pub primary: PtyPrimary,
    /// The program's terminal.
    pub secondary: OwnedFd,
}

/// The primary side of a pseudo-terminal, read by a thread of its own (blocking reads of a
/// terminal are the safe way to wait on one) and written from any task.
pub(crate) struct PtyPrimary {
    file: Arc<std::fs::File>,
}

/// Opens a pseudo-terminal of `rows` by `columns`, in UTF-8, without flow control (so a
/// Ctrl-S sent by mistake cannot freeze it).
pub(crate) fn open(rows: u16, columns: u16) -> io::Result<PtyPair> {
    let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
    let primary = openpt(flags)?;
    grantpt(&primary)?;
    unlockpt(&primary)?;
    let secondary = ioctl_tiocgptpeer(&primary, flags)?;
    let mut termios = tcgetattr(&secondary)?;
    termios.input_modes.remove(InputModes::IXON);
    termios.input_modes.insert(InputModes::IUTF8);
    tcsetattr(&secondary, OptionalActions::Now, &termios)?;
    tcsetwinsize(
        &primary,
        Winsize {
            ws_row: rows,
            ws_col: columns,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )?;
    Ok(PtyPair {
        primary: PtyPrimary {
            file: Arc::new(std::fs::File::from(primary)),
        },
        secondary,
    })
}

impl PtyPrimary {
    /// Reads what the program writes, in a thread of its own, passing each chunk to `sink`
    /// until no program holds the terminal any more (Linux reports that as an I/O error).
    pub fn read_in_thread(&self, mut sink: impl FnMut(&[u8]) + Send + 'static) -> io::Result<()> {
        let mut file = Arc::clone(&self.file);
        std::thread::Builder::new()
            .name("qilin-terminal".into())
            .spawn(move || {
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    match Read::read(&mut file, &mut buf) {
                        Ok(0) => break,
                        Ok(n) => sink(&buf[..n]),
                        Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            })?;
        Ok(())
    }

    /// Writes all of `bytes`, as typed keys.
    pub async fn write_all(&self, bytes: &[u8]) -> io::Result<()> {
        let file = Arc::clone(&self.file);
        let bytes = bytes.to_vec();
        tokio::task::spawn_blocking(move || (&*file).write_all(&bytes))
            .await
            .map_err(io::Error::other)?
    }
}
