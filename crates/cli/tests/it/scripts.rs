//! The helper scripts in `scripts/` that a test can run quickly.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Writes an executable shell script `name` into `bin`.
fn stand_in(bin: &Path, name: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    let file = bin.join(name);
    std::fs::write(&file, format!("#!/bin/sh\n{script}")).expect("stand-in written");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755))
        .expect("stand-in made executable");
}

/// A stand-in `rustc` in `bin` for host `host`, whose sysroot is `sysroot`.
fn rustc_stand_in(bin: &Path, host: &str, sysroot: &Path) {
    stand_in(
        bin,
        "rustc",
        &format!(
            "case \"$1\" in\n-vV) echo 'host: {host}';;\n--print) echo '{}';;\n*) exit 9;;\nesac\n",
            sysroot.display()
        ),
    );
}

/// `scripts/build-pgo.sh` needs the toolchain's `llvm-profdata`: without it
/// the script says how to get it and stops (status 2) before it builds
/// anything. A stand-in `rustc` names a sysroot without the tool; a
/// stand-in `cargo` leaves a mark if it is run.
#[test]
fn build_pgo_says_how_to_get_llvm_profdata_and_builds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sysroot = dir.path().join("sysroot");
    std::fs::create_dir(&sysroot).unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    rustc_stand_in(&bin, "x86_64-unknown-linux-gnu", &sysroot);
    let cargo_ran = dir.path().join("cargo-ran");
    stand_in(
        &bin,
        "cargo",
        &format!("touch '{}'\nexit 1\n", cargo_ran.display()),
    );
    let out = dir.path().join("croupier-pgo");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = Command::new("bash")
        .arg(repo().join("scripts/build-pgo.sh"))
        .arg(&out)
        .env("PATH", path)
        .env_remove("RUSTC")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "stderr: {stderr}");
    assert!(
        stderr.contains("rustup component add llvm-tools")
            && stderr.contains(&format!(
                "{}/lib/rustlib/x86_64-unknown-linux-gnu/bin/llvm-profdata is missing",
                sysroot.display()
            )),
        "stderr: {stderr}"
    );
    assert!(!out.exists());
    assert!(!cargo_ran.exists(), "cargo ran: {stderr}");
}

/// `scripts/build-pgo.sh` end to end with stand-ins, in a copy of the
/// script in a folder of its own (its builds go there): `cargo` "builds" a
/// `croupier` that writes a profile for its own PID in each training run
/// and, in `bench server`, names a server PID (99999999, above any
/// `pid_max`) as the real bench does, writing that one's profile only when `SERVER_PROFILE` is set. The
/// script must build `OUT` when the server's profile is there, and stop
/// with a message, building nothing more, when it is not (a server killed
/// instead of stopped writes none).
#[test]
fn build_pgo_trains_then_builds_and_insists_on_the_server_s_profile() {
    for server_profile in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let checkout = dir.path().join("checkout");
        std::fs::create_dir_all(checkout.join("scripts")).unwrap();
        std::fs::copy(
            repo().join("scripts/build-pgo.sh"),
            checkout.join("scripts/build-pgo.sh"),
        )
        .unwrap();
        let host = "x86_64-unknown-linux-gnu";
        let sysroot = dir.path().join("sysroot");
        let tools = sysroot.join(format!("lib/rustlib/{host}/bin"));
        std::fs::create_dir_all(&tools).unwrap();
        stand_in(
            &tools,
            "llvm-profdata",
            "[ \"$1\" = merge ] && [ \"$2\" = -o ] && : > \"$3\"\n",
        );
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        rustc_stand_in(&bin, host, &sysroot);
        stand_in(
            &dir.path().join("bin"),
            "croupier-stand-in",
            "profile() { : > \"$(printf '%s' \"$LLVM_PROFILE_FILE\" | sed \"s/%p/$1/; s/%m/7/\")\"; }\n\
             if [ \"$1 $2\" = 'bench server' ]; then\n\
               echo 'bench server: warm-up over after 1.0 s; measuring server pid 99999999 for 10 s' >&2\n\
               if [ -n \"$SERVER_PROFILE\" ]; then profile 99999999; fi\n\
             fi\n\
             profile $$\n",
        );
        let builds = dir.path().join("builds");
        stand_in(
            &bin,
            "cargo",
            &format!(
                "echo \"$@\" >> '{}'\n\
                 while [ $# -gt 0 ]; do case \"$1\" in --target) t=$2; shift;; --target-dir) d=$2; shift;; esac; shift; done\n\
                 mkdir -p \"$d/$t/release\" && cp '{}' \"$d/$t/release/croupier\"\n",
                builds.display(),
                bin.join("croupier-stand-in").display()
            ),
        );
        let out = dir.path().join("croupier-pgo");
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = Command::new("bash");
        command
            .arg(checkout.join("scripts/build-pgo.sh"))
            .arg(&out)
            .env("PATH", path)
            .env_remove("RUSTC")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("SERVER_PROFILE");
        if server_profile {
            command.env("SERVER_PROFILE", "1");
        }
        let run = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        let builds = std::fs::read_to_string(&builds).unwrap_or_default();
        if server_profile {
            assert_eq!(run.status.code(), Some(0), "stderr: {stderr}");
            assert!(out.exists(), "no OUT; stderr: {stderr}");
            assert!(
                stderr.contains("croupier bench web --games 20000"),
                "stderr: {stderr}"
            );
            assert!(
                builds.contains("--target-dir target/pgo-optimized"),
                "builds: {builds}"
            );
        } else {
            assert_eq!(run.status.code(), Some(1), "stderr: {stderr}");
            assert!(
                stderr.contains("the trained server (pid 99999999) wrote no profile"),
                "stderr: {stderr}"
            );
            assert!(!out.exists());
            assert!(
                !builds.contains("pgo-optimized") && !stderr.contains("bench web"),
                "it went on; builds: {builds}; stderr: {stderr}"
            );
        }
    }
}
