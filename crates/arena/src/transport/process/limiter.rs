//! Who sets a sandbox's limits from outside ([`super::inside`]): a small
//! Perl program, started once a process as the sandbox's user, that calls
//! `prlimit(2)` on the processes it is named.
//!
//! Setting another process's limits takes its user's identity (real,
//! effective and saved ids alike) or `CAP_SYS_RESOURCE`, which root lacks in
//! many containers. Croupier as root keeps its own identity; the limiter
//! becomes `nobody`, as the sandboxes are, before it reads a request (so
//! it is not dumpable: no other process of that user can trace it or open
//! its pipes; one that kills or stops it only makes the next start start
//! it again). Croupier under another user runs it as itself. A process's
//! limits are checked in `/proc` before its gate opens, whatever the
//! limiter said.
//!
//! When croupier is gone (killed outright too), the limiter kills the
//! processes it limited and this croupier's sandboxes left at their gate
//! ([`SCRIPT`]).
//!
//! Requests go over its stdin, one line each (`pid resource value …`), and
//! it answers one line (`ok`, or `no` and why), on a thread of its own, so
//! that any runtime can ask. Where Perl does not run, or the limiter cannot
//! be started, [`available`] says so and `prlimit` runs inside each sandbox
//! instead.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{mpsc, Mutex, OnceLock};

use super::sandbox::{is_root, SandboxLimits, NOBODY_ID};

/// Where Perl must be.
const PERL: &str = "/usr/bin/perl";

/// The limiter: `$ARGV[0]` is the number of `prlimit64`, `$ARGV[1]` that
/// of `prctl`, `$ARGV[2]` the user to become (empty: stay), `$ARGV[3]` and
/// `$ARGV[4]` those of `pidfd_open` and `pidfd_send_signal`, `$ARGV[5]`
/// croupier's pid. It closes every descriptor it was left but its stdio
/// (another start's, open across `exec` for a moment, would be kept from
/// its end), becomes that user (which leaves it not dumpable; `prctl` says
/// so again), asks for SIGUSR2 when the thread that started it ends
/// (`PR_SET_PDEATHSIG`, set after the user change, which clears it; a
/// SIGUSR2 while croupier is still its parent, which another process of
/// its user could send, is ignored), then answers each request.
///
/// It keeps a pidfd of each process it limited (while it lives). When
/// croupier is gone (that signal, or the end of its input: a limiter
/// replaced is killed, never let go), it kills them, and then, for a
/// second, every first process of a sandbox of its croupier's (by
/// [`super::MARKER`] in its environment) whose bubblewrap has gone (one it
/// was not named yet): a sandbox waiting at its gate when croupier was
/// killed outright does not wait for good. It ignores the terminal's
/// signals and SIGPIPE (a Ctrl-C reaches croupier's whole group; croupier
/// stops its bots itself), so that nothing but croupier's end ends it
/// before it has done that.
const SCRIPT: &str = r#"
use POSIX ();
$| = 1;
my ($prlimit, $prctl, $user, $pidfd_open, $pidfd_signal, $croupier) = @ARGV;
$SIG{$_} = 'IGNORE' for qw(INT QUIT HUP PIPE);
opendir(my $d, '/proc/self/fd') or die "croupier-limiter: /proc/self/fd: $!\n";
my @fds = grep { /\A[0-9]+\z/ && $_ > 2 } readdir $d;
closedir $d;
POSIX::close($_) for @fds;
if ($user ne '') {
  $) = "$user $user";
  POSIX::setgid($user + 0) or die "croupier-limiter: cannot become group $user: $!\n";
  POSIX::setuid($user + 0) or die "croupier-limiter: cannot become user $user: $!\n";
  ($< == $user && $> == $user) or die "croupier-limiter: still user $< ($>)\n";
  ("$(" eq "$user $user" && "$)" eq "$user $user")
    or die "croupier-limiter: still groups $( ($))\n";
}
syscall($prctl + 0, 4, 0) == 0 or die "croupier-limiter: cannot stop being dumpable: $!\n";
my %kept;
# The first MiB of a file of /proc/$_[0]: a process of the sandbox's user
# (a bot's, too) chooses its own command line and environment.
sub head {
  open(my $f, '<', "/proc/$_[0]/$_[1]") or return '';
  my $text = '';
  read($f, $text, 1 << 20);
  close $f;
  return $text;
}
sub cmdline { return split /\0/, head($_[0], 'cmdline') }
# Whether process $_[0] was started by this croupier (lifetime's marker,
# CROUPIER_BOT=PID.N, in its environment).
sub ours { return head($_[0], 'environ') =~ /(?:\A|\0)CROUPIER_BOT=$croupier\./ }
# The first processes of this croupier's sandboxes (bubblewrap's children,
# at a gate or running a program) whose bubblewrap is gone. (bubblewrap
# itself matches too once croupier is gone: it dies with croupier anyway.)
sub orphans {
  my @found;
  opendir(my $p, '/proc') or return;
  for my $pid (grep { /\A[0-9]+\z/ } readdir $p) {
    my @st = stat("/proc/$pid");
    next unless @st && $st[4] == $<;
    my @cmd = cmdline($pid);
    next unless @cmd && $cmd[0] =~ m{(?:\A|/)bwrap\z} && grep { $_ eq '--block-fd' } @cmd;
    next unless ours($pid);
    open(my $s, '<', "/proc/$pid/stat") or next;
    my $stat = <$s> // '';
    close $s;
    my ($ppid) = $stat =~ /.*\)\s+\S+\s+([0-9]+)/s or next;
    push @found, $pid unless ours($ppid);
  }
  closedir $p;
  return @found;
}
sub gone {
  syscall($pidfd_signal + 0, $_ + 0, 9, 0, 0) for keys %kept;
  # Those it was not named yet (croupier died between bubblewrap's start
  # and its request), once their bubblewrap has gone too.
  for (1 .. 10) {
    my @o = orphans();
    kill 'KILL', @o if @o;
    select(undef, undef, undef, 0.1);
  }
  POSIX::_exit(0);
}
# Only croupier's end: a SIGUSR2 while croupier is still its parent is
# some other process's of its user, and changes nothing.
$SIG{USR2} = sub { gone() if getppid() != $croupier };
syscall($prctl + 0, 1, 12) == 0 or die "croupier-limiter: cannot ask for a parent-death signal: $!\n";
getppid() == $croupier or gone();
while (my $l = <STDIN>) {
  my ($pid, @v) = split ' ', $l;
  my $why = '';
  my $fd = -1;
  if (!defined $pid || $pid !~ /\A[1-9][0-9]*\z/ || @v % 2) {
    $why = 'not a request';
  } else {
    $fd = syscall($pidfd_open + 0, $pid + 0, 0);
  }
  while ($why eq '' && @v) {
    my ($r, $x) = splice(@v, 0, 2);
    if ($r !~ /\A[0-9]+\z/ || $x !~ /\A[0-9]+\z/) { $why = 'not a request'; last }
    syscall($prlimit + 0, $pid + 0, $r + 0, pack('QQ', $x, $x), 0) == 0
      or $why = "resource $r: $!";
  }
  # A process it could not limit is killed by croupier, not kept here.
  if ($fd >= 0) { $why eq '' ? ($kept{$fd} = 1) : POSIX::close($fd) }
  print $why eq '' ? "ok\n" : "no $why\n";
  # A pidfd reads as ready once its process has ended: those are let go.
  my $all = '';
  vec($all, $_, 1) = 1 for keys %kept;
  if (%kept && select(my $ended = $all, undef, undef, 0) > 0) {
    for my $fd (grep { vec($ended, $_, 1) } keys %kept) {
      POSIX::close($fd);
      delete $kept{$fd};
    }
  }
}
gone();
"#;

/// How long the limiter may take to answer before it is started again.
const ANSWER: u16 = 2000;

/// A request: the process, its limits, and where the answer goes.
type Request = (
    i32,
    SandboxLimits,
    tokio::sync::oneshot::Sender<Result<(), String>>,
);

/// The requests' way to the limiter's thread, once it has started. The
/// thread starts every limiter and lives as long as the process: the
/// limiter's parent-death signal comes when the thread that started it
/// ends.
fn thread() -> Option<&'static Mutex<mpsc::Sender<Request>>> {
    static THREAD: OnceLock<Option<Mutex<mpsc::Sender<Request>>>> = OnceLock::new();
    THREAD
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Request>();
            let (up_tx, up) = mpsc::sync_channel::<bool>(1);
            std::thread::Builder::new()
                .name("croupier-limiter".into())
                .spawn(move || {
                    let mut helper = match Helper::start() {
                        Ok(h) => Some(h),
                        Err(e) => {
                            tracing::debug!("no limiter here ({e}): prlimit runs in each sandbox");
                            let _ = up_tx.send(false);
                            return;
                        }
                    };
                    let _ = up_tx.send(true);
                    while let Ok((pid, limits, answer)) = rx.recv() {
                        // A start given up meanwhile: its process is
                        // killed, and its pid may be another's now.
                        if answer.is_closed() {
                            continue;
                        }
                        let _ = answer.send(set_with(&mut helper, pid, &limits));
                    }
                })
                .inspect_err(|e| tracing::debug!("cannot start the limiter's thread: {e}"))
                .ok()?;
            up.recv().unwrap_or(false).then(|| Mutex::new(tx))
        })
        .as_ref()
}

/// Whether sandboxes' limits are set from outside here (the limiter
/// started; checked once a process).
pub(super) fn available() -> bool {
    thread().is_some()
}

/// Sets `limits` (soft and hard) on process `pid`, of the sandbox's user.
pub(super) async fn set(pid: i32, limits: &SandboxLimits) -> Result<(), String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let sent = thread()
        .ok_or("no limiter")?
        .lock()
        .map_err(|_| "the limiter is gone")?
        .send((pid, limits.clone(), tx));
    sent.map_err(|_| "the limiter is gone")?;
    rx.await.map_err(|_| "the limiter is gone".to_string())?
}

/// Has `helper` set `l` on `pid`. A limiter that fails to answer (gone,
/// or late: its answer could be taken for the next request's) is dropped
/// and a new one started, once a request; one that cannot be started is
/// tried again at the next request.
fn set_with(helper: &mut Option<Helper>, pid: i32, l: &SandboxLimits) -> Result<(), String> {
    let mut line = pid.to_string();
    for limit in l.each() {
        line.push_str(&format!(" {} {}", limit.resource, limit.value));
    }
    line.push('\n');
    let mut answer = None;
    for _ in 0..2 {
        let h = match helper {
            Some(h) => h,
            None => helper
                .insert(Helper::start().map_err(|e| format!("cannot start the limiter: {e}"))?),
        };
        match h.ask(&line) {
            Ok(a) => {
                answer = Some(a);
                break;
            }
            Err(e) => {
                tracing::debug!("the limiter did not answer ({e}): started again");
                *helper = None;
            }
        }
    }
    let answer = answer.ok_or("the limiter did not answer")?;
    match answer.strip_prefix("no ") {
        None if answer == "ok" => Ok(()),
        Some(why) => Err(why.to_string()),
        None => Err(format!("the limiter said {answer:?}")),
    }
}

/// Perl's arguments that run the limiter ([`SCRIPT`]) for croupier
/// `croupier` (its parent).
fn arguments(croupier: &str) -> Vec<String> {
    // It changes its user itself: a start that sets one would fork
    // croupier's whole address space (see `sandbox`).
    let user = if is_root() {
        NOBODY_ID.to_string()
    } else {
        String::new()
    };
    vec![
        "-e".into(),
        SCRIPT.into(),
        nix::libc::SYS_prlimit64.to_string(),
        nix::libc::SYS_prctl.to_string(),
        user,
        nix::libc::SYS_pidfd_open.to_string(),
        nix::libc::SYS_pidfd_send_signal.to_string(),
        croupier.to_string(),
    ]
}

/// The Perl process and its pipes.
struct Helper {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Helper {
    fn start() -> std::io::Result<Helper> {
        if !Path::new(PERL).is_file() {
            return Err(std::io::Error::other(format!("{PERL} is not there")));
        }
        Helper::with(Command::new(PERL).args(arguments(&std::process::id().to_string())))
    }

    /// Starts `cmd` (the limiter, or what runs it) as the limiter.
    fn with(cmd: &mut Command) -> std::io::Result<Helper> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env_clear()
            .spawn()?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other("the limiter has no pipes"));
        };
        let mut helper = Helper {
            child,
            input,
            output: BufReader::new(output),
        };
        // It answers, and refuses what is not a request.
        match helper.ask("x\n") {
            Ok(a) if a.starts_with("no ") => Ok(helper),
            Ok(a) => Err(std::io::Error::other(format!("the limiter said {a:?}"))),
            Err(e) => Err(e),
        }
    }

    /// Sends one line and reads one answer, within [`ANSWER`]
    /// milliseconds.
    fn ask(&mut self, line: &str) -> std::io::Result<String> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        use std::os::fd::AsFd;
        self.input.write_all(line.as_bytes())?;
        if !self.output.buffer().contains(&b'\n') {
            let out = self.output.get_ref().as_fd();
            let mut ready = [PollFd::new(out, PollFlags::POLLIN)];
            if poll(&mut ready, PollTimeout::from(ANSWER))? == 0 {
                return Err(std::io::Error::other("no answer in time"));
            }
        }
        let mut answer = String::new();
        if self.output.read_line(&mut answer)? == 0 {
            return Err(std::io::Error::other("no answer"));
        }
        Ok(answer.trim_end().to_string())
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a `/proc/PID/limits` text shows each of `l`'s limits, soft
/// and hard (`unlimited` for `u64::MAX`); why not.
pub(super) fn shows(seen: &str, l: &SandboxLimits) -> Result<(), String> {
    for limit in l.each() {
        let want = match limit.value {
            u64::MAX => "unlimited".to_string(),
            v => v.to_string(),
        };
        let line = seen
            .lines()
            .find_map(|line| line.strip_prefix(limit.shown_as));
        let mut words = line.unwrap_or_default().split_whitespace();
        if words.next() != Some(&want) || words.next() != Some(&want) {
            return Err(format!("its {} is not {want}: {line:?}", limit.shown_as));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    /// How `child` ended, within 5 s (`None`: it was still running, and
    /// is killed).
    fn ended(child: &mut std::process::Child) -> Option<std::process::ExitStatus> {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return Some(status);
            }
            if start.elapsed() > std::time::Duration::from_secs(5) {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// A process of the sandbox's user (sleeping 30 s) and its pid.
    fn sleeper() -> (std::process::Child, i32) {
        let mut sleeper = std::process::Command::new("sleep");
        sleeper.arg("30");
        if is_root() {
            sleeper.uid(NOBODY_ID).gid(NOBODY_ID);
        }
        let sleeper = sleeper.spawn().unwrap();
        let pid = i32::try_from(sleeper.id()).unwrap();
        (sleeper, pid)
    }

    /// A process of the sandbox's user gets the limits asked, and a
    /// request for a process that is not there is refused.
    #[tokio::test]
    async fn the_limiter_sets_a_process_of_the_sandboxs_users_limits() {
        if !Path::new(PERL).is_file() {
            eprintln!("skipped: no Perl here");
            return;
        }
        assert!(available(), "the limiter does not start");
        let (mut sleeper, pid) = sleeper();
        let limits = SandboxLimits {
            memory: 100 << 20,
            cpu_seconds: 7,
            processes: 9,
            open_files: 33,
            file_size: 5 << 20,
            tmp_size: 1 << 20,
        };
        set(pid, &limits).await.unwrap();
        let seen = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        shows(&seen, &limits).unwrap();
        assert!(set(i32::MAX, &limits).await.is_err());
    }

    /// When its input ends (croupier gone: a limiter replaced is killed,
    /// never let go), the limiter kills what it limited, though its parent
    /// lives on.
    #[test]
    fn what_the_limiter_limited_dies_when_its_input_ends() {
        if !Path::new(PERL).is_file() {
            eprintln!("skipped: no Perl here");
            return;
        }
        // A parent that relays the test's lines to the limiter until
        // `EOF`, then closes the limiter's input and lives on.
        const RELAY: &str = "pipe(my $r, my $w) or die; defined(my $p = fork) or die; \
             if (!$p) { open(STDIN, '<&', $r) or die; close $w; \
             s/\\ACROUPIER\\z/getppid()/e for @ARGV; exec @ARGV or die } \
             close $r; while (<STDIN>) { last if $_ eq \"EOF\\n\"; syswrite $w, $_ } \
             close $w; sleep 60";
        let mut parent = Command::new(PERL);
        parent.args(["-e", RELAY, PERL]).args(arguments("CROUPIER"));
        let mut helper = Some(Helper::with(&mut parent).unwrap());
        let (mut sleeper, pid) = sleeper();
        set_with(&mut helper, pid, &SandboxLimits::default()).unwrap();
        let h = helper.as_mut().unwrap();
        h.input.write_all(b"EOF\n").unwrap();
        let ended = ended(&mut sleeper);
        let parent_lives = h.child.try_wait().unwrap().is_none();
        drop(helper);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(ended.and_then(|s| s.signal()), Some(9), "{ended:?}");
        assert!(parent_lives, "the limiter's parent ended");
    }

    /// A process the limiter was named is killed when the limiter's
    /// parent dies outright (croupier SIGKILLed while a sandbox waits at
    /// its gate), and not before.
    #[test]
    fn what_the_limiter_limited_and_orphaned_first_processes_die_with_its_parent() {
        if !Path::new(PERL).is_file() {
            eprintln!("skipped: no Perl here");
            return;
        }
        // A parent of the limiter that the test can kill: it forks the
        // limiter (which keeps the pipes), naming itself its croupier.
        const PARENT: &str = "defined(my $p = fork) or die; \
             if (!$p) { s/\\ACROUPIER\\z/getppid()/e for @ARGV; exec @ARGV or die } sleep 60";
        let mut parent = Command::new(PERL);
        parent
            .args(["-e", PARENT, PERL])
            .args(arguments("CROUPIER"));
        let mut helper = Some(Helper::with(&mut parent).unwrap());
        let (mut sleeper, pid) = sleeper();
        set_with(&mut helper, pid, &SandboxLimits::default()).unwrap();
        // Look-alikes of a sandbox's first process it was never named: one
        // whose bubblewrap is gone (its parent exited), one whose
        // "bubblewrap" lives, and an orphan of another croupier's.
        let croupier = helper.as_ref().map(|h| h.child.id()).unwrap();
        let fake = |script: &str, croupier: u32| {
            let mut c = std::process::Command::new(PERL);
            c.args(["-e", script])
                .env(crate::transport::process::MARKER, format!("{croupier}.7"))
                .stdout(Stdio::piped());
            if is_root() {
                c.uid(NOBODY_ID).gid(NOBODY_ID);
            }
            let mut c = c.spawn().unwrap();
            let mut line = String::new();
            BufReader::new(c.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            (c, line.trim().parse::<i32>().unwrap())
        };
        let first = r#"my $p = fork // die; if (!$p) { close STDOUT; exec {'/usr/bin/perl'} 'bwrap', '-e', 'sleep 30', '--', '--block-fd', '3' } print "$p\n";"#;
        let (mut gone, orphan) = fake(&format!("{first} exit 0"), croupier);
        gone.wait().unwrap();
        // Another croupier's is none of its business.
        let (mut gone, other) = fake(&format!("{first} exit 0"), croupier + 1);
        gone.wait().unwrap();
        let (mut bwrap, kept) = fake(
            &format!("exec {{'/usr/bin/perl'}} 'bwrap', '-e', q{{{first} close STDOUT; sleep 30}}"),
            croupier,
        );
        let alive = |pid: i32| super::super::lifetime::running(nix::unistd::Pid::from_raw(pid));
        // A SIGUSR2 from anyone while its croupier lives changes nothing.
        let limiter = super::super::procstat::table()
            .into_iter()
            .find(|p| p.parent == croupier as i32)
            .map(|p| p.pid)
            .expect("the limiter runs");
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(limiter),
            nix::sys::signal::Signal::SIGUSR2,
        )
        .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(alive(limiter), "a stray SIGUSR2 ended the limiter");
        assert!(sleeper.try_wait().unwrap().is_none(), "killed too soon");
        assert!(
            alive(orphan) && alive(kept) && alive(other),
            "killed too soon"
        );
        let mut helper = helper.take().unwrap();
        helper.child.kill().unwrap();
        helper.child.wait().unwrap();
        let ended = ended(&mut sleeper);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(ended.and_then(|s| s.signal()), Some(9), "{ended:?}");
        let start = std::time::Instant::now();
        while alive(orphan) && start.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let (orphan_left, kept_left, other_left) = (alive(orphan), alive(kept), alive(other));
        for pid in [orphan, kept, other] {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = bwrap.kill();
        let _ = bwrap.wait();
        assert!(
            !orphan_left,
            "a first process whose bubblewrap is gone was left"
        );
        assert!(
            kept_left,
            "a first process whose bubblewrap lives was killed"
        );
        assert!(other_left, "another croupier's first process was killed");
    }
}
