//! A sandbox's network: a namespace of its own, with only its loopback.

use super::*;

/// The name of a network namespace, as `/proc/PID/ns/net` gives it.
fn net_of(pid: &str) -> String {
    std::fs::read_link(format!("/proc/{pid}/ns/net"))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Sandboxes started cold, side by side, each get a network namespace of
/// their own, not the host's: its only interface the loopback, up (::1 on
/// it), as bubblewrap sets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_sandbox_has_a_network_of_its_own_with_its_loopback_up() {
    let strict = ProcessLimits {
        sandbox: Sandbox::Strict(SandboxLimits::default()),
        ..limits()
    };
    let script = "readlink /proc/self/ns/net; \
        cut -d: -f1 /proc/net/dev | tail -n +3 | tr -d ' ' | tr '\\n' ,; echo; \
        grep -c '^0*1 .* lo$' /proc/net/if_inet6; cat";
    let host = net_of("self");
    let mut started = Vec::new();
    for _ in 0..3 {
        started.push(BotProcess::spawn(&sh(script), &strict).unwrap());
    }
    let mut seen = Vec::new();
    for p in &mut started {
        let net = p.recv(soon(5000)).await.unwrap();
        assert_eq!(p.recv(soon(5000)).await.unwrap(), "lo,");
        assert_eq!(p.recv(soon(5000)).await.unwrap(), "1", "::1 on lo");
        assert_ne!(net, host);
        assert!(!seen.contains(&net), "{net} shared");
        seen.push(net);
    }
    for p in started {
        p.terminate().await;
    }
}
