//! The sandbox's system-call filter: no kernel keyrings.
//!
//! Every sandbox runs as the same user on the host (`nobody`), and the
//! kernel's keys are the user's: a key one sandbox's program adds
//! (`add_key`) is listed, with its description, in `/proc/keys` of every
//! other sandbox, and the user keyrings of all of them are open to each
//! other. Two bots could talk through them, and a bot's keys would outlive
//! its match in a sandbox kept for the next one. Bot programs have no use
//! for keys, so `add_key`, `request_key` and `keyctl` fail with `ENOSYS`
//! (as where the kernel has no keys at all), for the host's native system
//! calls and its 32-bit ones (x86-64: i386's `int 0x80` and x32's; arm64:
//! 32-bit Arm's); a call of an architecture it does not know kills the
//! program. On other hosts (neither x86-64 nor arm64) there is no filter.
//!
//! The filter is a classic BPF program that bubblewrap installs
//! (`--seccomp FD`) just before it starts the program (or the holder of a
//! held sandbox, whose rounds inherit it); [`pipe`] hands it over on a pipe
//! of its own for each start.

use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::sync::OnceLock;

use crate::transport::error::TransportError;

/// `BPF_LD | BPF_W | BPF_ABS`: loads a word of the system call's data.
const LOAD: u16 = 0x20;
/// `BPF_JMP | BPF_JEQ | BPF_K`.
const JUMP_IF_EQUAL: u16 = 0x15;
/// `BPF_ALU | BPF_AND | BPF_K`.
const AND: u16 = 0x54;
/// `BPF_RET | BPF_K`.
const RETURN: u16 = 0x06;

/// `seccomp_data`: the system call's number, then its architecture.
const NUMBER_AT: u32 = 0;
const ARCH_AT: u32 = 4;

const ALLOW: u32 = 0x7fff_0000;
/// `SECCOMP_RET_KILL_PROCESS`.
const KILL: u32 = 0x8000_0000;
/// `SECCOMP_RET_ERRNO` with `ENOSYS`.
const NO_SUCH_CALL: u32 = 0x0005_0000 | nix::libc::ENOSYS as u32;

/// One architecture's keyring calls: `add_key`, `request_key`, `keyctl`.
struct Calls {
    /// Its `AUDIT_ARCH_*`.
    arch: u32,
    /// What the number is masked with first (x32's bit cleared).
    mask: u32,
    numbers: [u32; 3],
}

/// The calls refused on this host, native ones first.
fn refused() -> Vec<Calls> {
    let native = |arch: u32, mask: u32| Calls {
        arch,
        mask,
        numbers: [
            nix::libc::SYS_add_key as u32,
            nix::libc::SYS_request_key as u32,
            nix::libc::SYS_keyctl as u32,
        ],
    };
    #[cfg(target_arch = "x86_64")]
    {
        vec![
            // AUDIT_ARCH_X86_64; x32 calls carry bit 30 (`__X32_SYSCALL_BIT`).
            native(0xc000_003e, 0xbfff_ffff),
            // AUDIT_ARCH_I386: the 32-bit calls' own numbers.
            Calls {
                arch: 0x4000_0003,
                mask: u32::MAX,
                numbers: [286, 287, 288],
            },
        ]
    }
    #[cfg(target_arch = "aarch64")]
    {
        vec![
            native(0xc000_00b7, u32::MAX),
            // AUDIT_ARCH_ARM: 32-bit programs, where the kernel runs them.
            Calls {
                arch: 0x4000_0028,
                mask: u32::MAX,
                numbers: [309, 310, 311],
            },
        ]
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Vec::new()
    }
}

/// One instruction (`struct sock_filter`, native byte order).
fn op(code: u16, jt: u8, jf: u8, k: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&code.to_ne_bytes());
    out.extend_from_slice(&[jt, jf]);
    out.extend_from_slice(&k.to_ne_bytes());
}

/// The filter as bubblewrap reads it: for each architecture, its calls
/// refused and everything else allowed; a call of any other
/// architecture kills the program (the kernel runs none other here that
/// it knows of). `None` where this build knows no architecture's calls
/// (neither x86-64 nor arm64): no filter there.
pub fn filter() -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let calls = refused();
    if calls.is_empty() {
        return None;
    }
    // Each architecture's block: a load and a check of the architecture,
    // a load and a mask of the number, a test per call and an allow (8
    // instructions); then the final allow and the refusal.
    let block = 8u8;
    let deny_at = (calls.len() as u8) * block + 1;
    for (i, c) in calls.iter().enumerate() {
        let at = i as u8 * block;
        op(LOAD, 0, 0, ARCH_AT, &mut out);
        // Not this architecture: the next block.
        op(JUMP_IF_EQUAL, 0, block - 2, c.arch, &mut out);
        op(LOAD, 0, 0, NUMBER_AT, &mut out);
        op(AND, 0, 0, c.mask, &mut out);
        for (j, n) in c.numbers.iter().enumerate() {
            let here = at + 4 + j as u8;
            op(JUMP_IF_EQUAL, deny_at - here - 1, 0, *n, &mut out);
        }
        op(RETURN, 0, 0, ALLOW, &mut out);
    }
    op(RETURN, 0, 0, KILL, &mut out);
    op(RETURN, 0, 0, NO_SUCH_CALL, &mut out);
    Some(out)
}

/// A pipe holding [`filter`], its writing end closed: the end bubblewrap
/// reads from (closed on `exec` until the spawner hands it over). `None`
/// where there is no filter.
pub fn pipe() -> Result<Option<OwnedFd>, TransportError> {
    static FILTER: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    let Some(filter) = FILTER.get_or_init(filter) else {
        return Ok(None);
    };
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| TransportError::Io(format!("cannot make the sandbox's filter pipe: {e}")))?;
    let mut write = std::fs::File::from(write);
    // A few hundred bytes: well within a pipe's buffer.
    write
        .write_all(filter)
        .map_err(|e| TransportError::Io(format!("cannot write the sandbox's filter: {e}")))?;
    drop(write);
    Ok(Some(read))
}
