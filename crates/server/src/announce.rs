//! The line `croupier serve` logs once it listens, and how to read the
//! port back from it: a server started on `127.0.0.1:0` says there which
//! port it was given (tests and benchmarks start it so, then read it).

use std::net::SocketAddr;

/// What the line says before the address.
const SERVING: &str = "croupier serving SkullWhist on http://";

/// The line for a server listening on `addr` over `database` (a database
/// URL; a password in it is not written).
pub fn serving_line(addr: SocketAddr, database: &str) -> String {
    format!(
        "{SERVING}{addr}/ (API: http://{addr}/api/), database {}",
        croupier_store::without_password(database)
    )
}

/// The port in the first serving line found in `log` (a line, or a whole
/// log), once its address is there whole.
pub fn port_in_serving_line(log: &str) -> Option<u16> {
    let rest = log.split(SERVING).nth(1)?;
    let (addr, _) = rest.split_once('/')?;
    addr.rsplit_once(':')?.1.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_read_back_from_the_line_and_only_from_a_whole_address() {
        let addr: SocketAddr = "127.0.0.1:43210".parse().unwrap();
        let line = serving_line(addr, "sqlite://croupier.db");
        assert_eq!(port_in_serving_line(&line), Some(43210));
        let log = format!("2026-12-04 INFO croupier::serve: {line}\nmore\n");
        assert_eq!(port_in_serving_line(&log), Some(43210));
        // Half written: no port yet, not a wrong one.
        assert_eq!(
            port_in_serving_line(&line[..line.find("43").unwrap() + 2]),
            None
        );
        assert_eq!(port_in_serving_line("nothing here"), None);
        let v6: SocketAddr = "[::1]:8080".parse().unwrap();
        assert_eq!(port_in_serving_line(&serving_line(v6, "x")), Some(8080));
    }

    #[test]
    fn a_database_password_is_not_written() {
        let addr: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let line = serving_line(
            addr,
            "postgres://croupier:s3cret@db.example:5432/croupier?sslmode=require",
        );
        assert!(!line.contains("s3cret"), "{line}");
        assert!(
            line.ends_with(
                "database postgres://croupier:***@db.example:5432/croupier?sslmode=require"
            ),
            "{line}"
        );
        for kept in [
            "sqlite://croupier.db",
            "postgres://croupier@localhost/db",
            "postgres:///db?host=/run/pg",
        ] {
            assert!(serving_line(addr, kept).ends_with(kept), "{kept}");
        }
        // A password holding '@' is hidden whole.
        let line = serving_line(addr, "postgres://u:p@ss@h/db");
        assert!(line.ends_with("postgres://u:***@h/db"), "{line}");
    }
}
