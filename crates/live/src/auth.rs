//! Passwords (argon2id) and session tokens (128 bits from the OS CSPRNG).

use crate::visibility::{os_random, NoEntropy};
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

type Job = Box<dyn FnOnce() + Send>;

/// Argon2 work (memory-hard: about 19 MiB a hash) runs on two dedicated
/// threads behind a bounded queue, so a burst of registrations or logins
/// neither exhausts memory nor starves the request workers.
fn hashing_queue() -> &'static std::sync::mpsc::SyncSender<Job> {
    static QUEUE: std::sync::OnceLock<std::sync::mpsc::SyncSender<Job>> =
        std::sync::OnceLock::new();
    QUEUE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(512);
        let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
        for i in 0..2 {
            let rx = std::sync::Arc::clone(&rx);
            let _ = std::thread::Builder::new()
                .name(format!("argon2-{i}"))
                .spawn(move || loop {
                    let job = match rx.lock() {
                        Ok(r) => r.recv(),
                        Err(_) => return,
                    };
                    match job {
                        Ok(job) => job(),
                        Err(_) => return,
                    }
                });
        }
        tx
    })
}

/// Runs a password hash or check on the hashing threads; `None` when the
/// queue is full (the server is overloaded) or the work failed.
pub async fn hashing<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = tx.send(work());
    });
    hashing_queue().try_send(job).ok()?;
    rx.await.ok()
}

/// Why a password hash or a session token could not be made.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// No random bytes for a salt or token.
    #[error(transparent)]
    Random(#[from] NoEntropy),
    /// argon2 refused.
    #[error("cannot hash the password: {0}")]
    Hash(argon2::password_hash::Error),
}

/// Hashes a password with argon2id and a random salt (PHC string).
pub fn hash_password(password: &str) -> Result<String, AuthError> {
    let mut bytes = [0u8; 16];
    os_random(&mut bytes)?;
    let salt = SaltString::encode_b64(&bytes).map_err(AuthError::Hash)?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(AuthError::Hash)
}

/// Checks a password against a stored hash.
pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

/// A hash of a password nobody knows, made with the same parameters as
/// real ones: checked against when a name is unknown, so that an unknown
/// name takes as long to refuse as a wrong password (issue 18).
pub fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| {
        let mut bytes = [0u8; 24];
        let made = os_random(&mut bytes)
            .map_err(AuthError::from)
            .and_then(|()| hash_password(&hex::encode(bytes)));
        made.unwrap_or_else(|e| {
            // Unknown names are then refused faster than wrong passwords.
            tracing::error!("no dummy password hash: {e}");
            String::new()
        })
    })
}

/// Checks `password` against `hash`, or against [`dummy_hash`] (always
/// false, in the same time) when there is no account.
pub fn verify_or_dummy(password: &str, hash: Option<&str>) -> bool {
    match hash {
        Some(h) => verify_password(password, h),
        None => {
            let _ = verify_password(password, dummy_hash());
            false
        }
    }
}

/// A new session token: 128 random bits from the OS, as 32 hex characters.
pub fn new_session() -> Result<String, AuthError> {
    let mut bytes = [0u8; 16];
    os_random(&mut bytes)?;
    Ok(hex::encode(bytes))
}

/// Whether a bot name is 1 to 32 characters of `[-_a-zA-Z0-9]`.
pub fn valid_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether a password is 1 to 255 characters.
pub fn valid_password(password: &str) -> bool {
    (1..=255).contains(&password.chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_verify_only_against_their_hash() {
        let h = hash_password("secret").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password("secret", &h));
        assert!(!verify_password("Secret", &h));
        assert!(!verify_password("secret", "not a hash"));
    }

    #[test]
    fn unknown_accounts_are_checked_against_a_dummy_hash() {
        assert!(dummy_hash().starts_with("$argon2id$"));
        assert!(!verify_or_dummy("secret", None));
        let h = hash_password("secret").unwrap();
        assert!(verify_or_dummy("secret", Some(&h)));
    }

    #[test]
    fn sessions_are_32_hex_chars_and_differ() {
        let a = new_session().unwrap();
        let b = new_session().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn names_and_passwords_have_limits() {
        assert!(valid_name("bot_1-A"));
        for bad in ["", "has space", "é", &"x".repeat(33), "a/b"] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert!(valid_password("p") && valid_password(&"p".repeat(255)));
        assert!(!valid_password("") && !valid_password(&"p".repeat(256)));
    }
}
