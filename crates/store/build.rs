//! `sqlx::migrate!` embeds the migrations at compile time, but Cargo does
//! not know that it reads them: without this, a migration added or edited
//! is left out of an incremental build (sqlx's documented build script).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
