//! Counting open connections, overall and per client address.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Open connections: how many, and how many from each address.
#[derive(Debug)]
pub struct ConnectionLimits {
    max: usize,
    per_address: usize,
    open: Arc<Mutex<Counts>>,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// One admitted connection; dropping it frees its place.
#[derive(Debug)]
pub struct Slot {
    ip: IpAddr,
    open: Arc<Mutex<Counts>>,
}

impl ConnectionLimits {
    /// At most `max` connections, `per_address` of them from one address.
    pub fn new(max: usize, per_address: usize) -> Self {
        ConnectionLimits {
            max,
            per_address,
            open: Arc::default(),
        }
    }

    /// A place for a connection from `ip`, if both caps allow.
    pub fn admit(&self, ip: IpAddr) -> Option<Slot> {
        let mut c = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if c.total >= self.max {
            return None;
        }
        let n = c.by_address.entry(ip).or_insert(0);
        if *n >= self.per_address {
            return None;
        }
        *n += 1;
        c.total += 1;
        Some(Slot {
            ip,
            open: Arc::clone(&self.open),
        })
    }

    /// Whether three quarters of the overall cap are in use.
    pub fn crowded(&self) -> bool {
        self.open() * 4 >= self.max * 3
    }

    /// Open connections now.
    pub fn open(&self) -> usize {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).total
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self.open.lock().unwrap_or_else(|p| p.into_inner());
        c.total = c.total.saturating_sub(1);
        if let Some(n) = c.by_address.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                c.by_address.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_hold_overall_and_per_address_and_free_on_drop() {
        let l = ConnectionLimits::new(3, 2);
        let a: IpAddr = "127.0.0.2".parse().unwrap();
        let b: IpAddr = "127.0.0.3".parse().unwrap();
        let a1 = l.admit(a).unwrap();
        let _a2 = l.admit(a).unwrap();
        assert!(l.admit(a).is_none(), "per address");
        let _b1 = l.admit(b).unwrap();
        assert!(l.admit(b).is_none(), "overall");
        assert_eq!(l.open(), 3);
        assert!(l.crowded());
        drop(a1);
        assert_eq!(l.open(), 2);
        assert!(l.admit(a).is_some());
    }
}
