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
    stand_in(
        &bin,
        "rustc",
        &format!(
            "case \"$1\" in\n-vV) echo 'host: x86_64-unknown-linux-gnu';;\n--print) echo '{}';;\n*) exit 9;;\nesac\n",
            sysroot.display()
        ),
    );
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
