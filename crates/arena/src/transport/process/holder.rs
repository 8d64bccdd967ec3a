//! The program that holds a sandbox for a match ([`super::held`]): it
//! starts each round's program, says when it started and how it ended, and
//! clears the sandbox between matches.
//!
//! Two of them speak the same lines. [`PERL`], a Perl program, is used when
//! the host's `/usr/bin/perl` runs (Debian's `perl-base`, an essential
//! package, puts it there; see [`Kind::here`]): it starts a round's
//! program with one `fork`, a `setsid` system call and the program's
//! `exec`. [`SH`], the shell holder,
//! is used elsewhere: its round costs two `fork`s of the shell and the
//! `exec` of `setsid`, about twice the CPU (1.7 against 0.85 ms a round on
//! the 2-core VM of issue 53, where every `exec` of a dynamically linked
//! program pays for glibc's probe of the CPU). Both clear the sandbox with
//! [`CLEAR`]'s steps.
//!
//! The lines, in: `n c` and the `c` words of round `n`'s command, one per
//! line, or `n =` for the last round's command again; `n r` to clear the
//! sandbox; `n d` and a folder on the next line, to work there from now
//! on (a spare sandbox's, [`super::spare`], once its program's folders
//! are bound: the holder reads its mount points again then). Out: `n
//! started PID` (the program's pid inside), `n exit STATUS` (128 + n:
//! killed by signal n), `n reset 0` (clear) or `n reset 1` (something is
//! left; the sandbox is not used again), `n cd 0` (in the folder) or `n cd
//! 1` (not). A round's
//! program reads and writes three FIFOs that Croupier made for that round
//! (`/run/croupier-held/n.in`, `.out`, `.err`), runs in a session and
//! process group of its own, and nothing else keeps a copy of them. Either
//! holder ends at the end of its input.

use std::path::Path;
use std::sync::OnceLock;

/// The first lines of [`CLEAR`] and [`SH`]: `t` is the list of mount points
/// inside the places a program may write (a bot's folder inside the host's
/// `/tmp`), from `/proc/self/mountinfo`.
macro_rules! mounts {
    () => {
        r#"t=
while read -r x x x x m x; do case $m in /tmp/*|/dev/shm/*|/dev/mqueue/*) t="$t $m";; esac; done </proc/self/mountinfo
"#
    };
}

/// Empties the places a program may write (`/tmp`, `/dev/shm`,
/// `/dev/mqueue`; the rest is read-only; a folder the program closed is
/// opened again first; a `/tmp` that is a bot's read-only folder is left;
/// the mount points in `t`, and the folders on their way, are kept while
/// everything else is removed) and removes the IPC namespace's System V
/// objects; `s` is 1 if something is left. A place that holds nothing but
/// mount points (a bot's folder, or its program, inside the host's `/tmp`,
/// and nothing the program left) is seen to be clear by the shell alone:
/// the `find`s that clear around mount points cost three `exec`s, about
/// 3 ms a clearing on the 2-core VM of issue 53.
macro_rules! clear {
    () => {
        r#"s=0
for d in /tmp /dev/shm /dev/mqueue; do
[ -r "$d" ] && [ -w "$d" ] && [ -x "$d" ] || chmod u+rwx "$d" 2>/dev/null
[ -w "$d" ] || continue
case $t in *[*?[\\]*) s=1; continue;; esac
k=
for m in $t; do case $m in "$d"/*) k="$k $m";; esac; done
if [ -n "$k" ]; then
o=0
for f in "$d"/* "$d"/.[!.]* "$d"/..?*; do
if [ -e "$f" ] || [ -h "$f" ]; then case " $k " in *" $f "*) ;; *) o=1; break;; esac; fi
done
[ $o = 0 ] && continue
( set -f; set --; a=
for m in $k; do while [ "$m" != "$d" ]; do set -- "$@" ! -path "$m"; a="$a $m"; m=${m%/*}; done; done
chmod u+rwx $a 2>/dev/null
find "$d" -xdev -mindepth 1 -depth "$@" -exec rm -rf {} + 2>/dev/null
[ -z "$(find "$d" -xdev -mindepth 1 "$@" 2>/dev/null)" ] ) || s=1
continue
fi
for f in "$d"/* "$d"/.[!.]* "$d"/..?*; do
if [ -e "$f" ] || [ -h "$f" ]; then
rm -rf -- "$d"/* "$d"/.[!.]* "$d"/..?* 2>/dev/null ||
{ chmod -R u+rwX -- "$d"/* "$d"/.[!.]* "$d"/..?* 2>/dev/null; rm -rf -- "$d"/* "$d"/.[!.]* "$d"/..?* 2>/dev/null; }
break; fi
done
for f in "$d"/* "$d"/.[!.]* "$d"/..?*; do
if [ -e "$f" ] || [ -h "$f" ]; then s=1; fi
done
done
for q in msg sem shm; do
if { read -r h && read -r h; } </proc/sysvipc/$q; then ipcrm --all 2>/dev/null
if { read -r h && read -r h; } </proc/sysvipc/$q; then s=1; fi; fi
done
"#
    };
}

/// The sandbox's clearing as a shell script of its own, which [`PERL`] runs
/// (once every process but the holder and the sandbox's init has been
/// killed): it exits with 0 when the sandbox is clear.
pub const CLEAR: &str = concat!(mounts!(), clear!(), "exit $s\n");

/// The shell holder. For each round it opens the round's FIFOs (Croupier
/// holds their other ends, so no open waits) and leaves the round to a
/// shell of its own in the background, which starts the command (found on
/// the sandbox's `PATH`) through `setsid`, says `n started PID`, waits for
/// it, kills what is left in its process group and says `n exit STATUS`;
/// so a round starts while the last one's program is still ending, as it
/// would in a sandbox of its own. A reset kills every process but itself
/// and the sandbox's init (SIGKILL to all it may signal: the sandbox's PID
/// namespace) until none is left (at most 200 times, each a `sleep 0.001`
/// apart: about 0.8 s here), reaps its round shells and clears
/// ([`CLEAR`]'s steps). Unlike [`PERL`], it does not check its own limits
/// and priority.
pub const SH: &str = concat!(
    mounts!(),
    r#"while read -r n c; do
if [ "$c" = r ]; then
kill -9 -1 2>/dev/null; kill -9 -1 2>/dev/null; wait
i=0; while kill -0 -1 2>/dev/null && [ $i -lt 200 ]; do kill -9 -1 2>/dev/null; wait; sleep 0.001; i=$((i + 1)); done
"#,
    clear!(),
    r#"[ $i -lt 200 ] || s=1
echo "$n reset $s"
continue
fi
if [ "$c" = d ]; then
IFS= read -r a || exit 0
"#,
    mounts!(),
    r#"if cd "$a" 2>/dev/null; then echo "$n cd 0"; else echo "$n cd 1"; fi
continue
fi
if [ "$c" != = ]; then
set --
while [ "$c" -gt 0 ]; do IFS= read -r a || exit 0; set -- "$@" "$a"; c=$((c - 1)); done
fi
exec 3<"/run/croupier-held/$n.in" 4>"/run/croupier-held/$n.out" 5>"/run/croupier-held/$n.err"
{ setsid "$@" <&3 >&4 2>&5 3<&- 4>&- 5>&- &
exec 3<&- 4>&- 5>&-
echo "$n started $!"
wait "$!"
x=$?
kill -9 -$! 2>/dev/null
echo "$n exit $x"; } &
exec 3<&- 4>&- 5>&-
done"#
);

/// The Perl holder (no modules: loading `POSIX` alone took 11 ms). It
/// reads its input with `select` and `sysread`, so that it reaps the
/// rounds' programs as they end (SIGCHLD interrupts the wait; a wait also
/// ends every 50 ms, for a signal that came just before it) and says how
/// each ended. A round's program is its own child: `fork`, then the
/// `setsid` system call (its number is the holder's third argument, given
/// by Croupier, which knows the machine it was built for), the FIFOs on
/// descriptors 0–2 (Perl's other descriptors close on `exec`), and the
/// `exec` (Perl's list form searches `PATH`, with no shell). It says that
/// the round started right after the `fork`, before the child's `setsid`
/// (waiting for the `exec` cost Love Letter's rounds 7% of their
/// throughput): Croupier signals such a program alone until it leads its
/// group. When a round's program ends, the holder reaps it and kills what
/// is left in its process group (as the end of a sandbox's first process
/// ends the sandbox), then says so. A reset kills every process but
/// itself and the sandbox's init, again every millisecond until none is
/// left (killed processes the init adopted may still be ending; after 500
/// tries the sandbox is not used again), and refuses the sandbox if its
/// own limits, priority, I/O priority (`ioprio_get`, whose number is its
/// fifth argument), scheduling or CPUs are not what they were at its
/// start: a round's program runs as its user, and what it changed there
/// would reach the next match's programs. Then it clears: where every
/// writable place is empty (once opened to its owner again, as [`CLEAR`]
/// opens it) but for the mount points the sandbox started with (a bot's
/// folder, or its program, inside the host's `/tmp`, read from
/// `/proc/self/mountinfo` at its start: a program in the sandbox can
/// neither mount nor remove a mount point) and no System V object is
/// left, which is the common case after a well-behaved program, it has
/// nothing more to do and says so without starting a program (`/bin/sh`
/// and its `chmod`s cost about 4 ms of CPU on the benchmarks' VM: as much
/// as a game of Goofspiel);
/// otherwise it runs [`CLEAR`] (the holder's second argument) with
/// `/bin/sh`. It ends, saying why on its stderr, if a
/// round's FIFOs cannot be opened or it cannot fork, as the shell holder
/// does.
///
/// First it makes itself not dumpable (`prctl(PR_SET_DUMPABLE, 0)`, the
/// number of `prctl` its fourth argument): a round's program, which runs
/// as the same user, may then neither trace it nor open its descriptors
/// through `/proc` (to say `n reset 0` in its name, say). A program's
/// `exec` makes it dumpable again, as any program is; the shell holder
/// cannot do this.
pub const PERL: &str = r#"$| = 1;
my ($clear, $setsid, $prctl, $ioprio) = @ARGV[1 .. 4];
syscall($prctl + 0, 4, 0) == 0 or die "croupier-held: cannot stop being dumpable: $!\n";
my (%round, @cmd);
my $buf = '';
$SIG{CHLD} = sub {};
sub looks {
  my $s = '';
  for my $p ('/proc/self/limits', '/proc/self/status', '/proc/self/stat') {
    open(my $f, '<', $p) or return '';
    local $/;
    my $t = <$f>;
    $t = join '', grep { /\A(Cpus|Mems)_allowed_list:/ } split /^/, $t if $p =~ /status/;
    $t = join ' ', (split ' ', ($t =~ /\) (.*)/s)[0])[15, 16, 37, 38] if $p =~ /stat\z/;
    $s .= $t;
  }
  $s . ' io ' . syscall($ioprio + 0, 1, 0);
}
my $fresh = looks();
$fresh ne '' or die "croupier-held: cannot read its own limits and priority\n";
sub mounts {
  my %at;
  if (open(my $m, '<', '/proc/self/mountinfo')) {
    while (<$m>) { my $at = (split / /)[4]; $at{$at} = 1 if defined $at; }
  }
  %at;
}
my %mounted = mounts();
sub reap {
  while ((my $p = waitpid(-1, 1)) > 0) {
    my $s = $?;
    my $n = delete $round{$p};
    next unless defined $n;
    kill 9, -$p;
    print "$n exit ", ($s & 127 ? 128 + ($s & 127) : $s >> 8), "\n";
  }
}
sub bare {
  for my $d ('/tmp', '/dev/shm', '/dev/mqueue') {
    my @s = stat $d;
    chmod(($s[2] & 07777) | 0700, $d) if @s;
    next unless -w $d;
    opendir(my $h, $d) or return 0;
    while (defined(my $e = readdir $h)) { return 0 unless $e eq '.' || $e eq '..' || $mounted{"$d/$e"}; }
  }
  for my $q ('msg', 'sem', 'shm') {
    open(my $f, '<', "/proc/sysvipc/$q") or next;
    my $head = <$f>;
    return 0 if defined <$f>;
  }
  1;
}
sub line {
  while (1) {
    return $1 if $buf =~ s/\A([^\n]*)\n//;
    reap();
    my $r = '';
    vec($r, 0, 1) = 1;
    next if select($r, undef, undef, 0.05) <= 0;
    my $k = sysread(STDIN, $buf, 4096, length $buf);
    next if !defined $k && $! == 4;
    return undef if !$k;
  }
}
while (defined(my $l = line())) {
  my ($n, $c) = $l =~ /\A(\S*) *(.*)\z/;
  if ($c eq 'r') {
    kill 9, -1;
    my $t = 0;
    while (1) {
      1 while waitpid(-1, 1) > 0;
      last if !kill(0, -1) || ++$t > 500;
      kill 9, -1;
      select(undef, undef, undef, 0.001);
    }
    %round = ();
    my $left = ($t > 500 || looks() ne $fresh) ? 1 : 0;
    if (!$left && !bare()) {
      system('/bin/sh', '-c', $clear, 'croupier-clear');
      $left = $? == 0 ? 0 : 1;
    }
    print "$n reset $left\n";
    next;
  }
  if ($c eq 'd') {
    my $d = line();
    exit 0 unless defined $d;
    %mounted = mounts();
    print "$n cd ", (chdir($d) ? 0 : 1), "\n";
    next;
  }
  if ($c ne '=') {
    $c =~ /\A[0-9]+\z/ && $c > 0 or die "croupier-held: not a round: $l\n";
    @cmd = ();
    for (1 .. $c) { my $a = line(); exit 0 unless defined $a; push @cmd, $a; }
  }
  my $f = "/run/croupier-held/$n";
  my ($i, $o, $e);
  open($i, '<', "$f.in") && open($o, '>', "$f.out") && open($e, '>', "$f.err")
    or die "croupier-held: cannot open the pipes of round $n: $!\n";
  my $p = fork();
  defined $p or die "croupier-held: cannot start round $n: $!\n";
  if (!$p) {
    if (syscall($setsid + 0) <= 0) {
      my $why = $!;
      print STDERR "croupier-held: cannot start a session: $why\n";
      exit 126;
    }
    open(STDIN, '<&', $i) && open(STDOUT, '>&', $o) && open(STDERR, '>&', $e) or exit 126;
    $SIG{CHLD} = 'DEFAULT';
    exec { $cmd[0] } @cmd;
    my $why = $!;
    print STDERR "croupier-held: cannot run $cmd[0]: $why\n";
    exit($why == 2 ? 127 : 126);
  }
  close $i; close $o; close $e;
  $round{$p} = $n;
  print "$n started $p\n";
}"#;

/// What [`Kind::here`] runs with the host's Perl: the holder's first
/// system call, in a process of its own (it exits with 0 if it worked).
const PROBE: &str = "exit(syscall($ARGV[1] + 0, 4, 0) == 0 ? 0 : 1)";

/// Where the Perl holder's interpreter must be: inside the sandbox, which
/// sees the host's `/usr`.
const PERL_PATH: &str = "/usr/bin/perl";

/// Which holder a held sandbox runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// [`PERL`], where the host's `/usr/bin/perl` runs.
    Perl,
    /// [`SH`].
    Sh,
}

impl Kind {
    /// The Perl holder if the host's Perl runs and makes the system calls
    /// it needs (tried once a process, on the host: the sandbox sees the
    /// host's `/usr`), else the shell's.
    pub fn here() -> Kind {
        static HERE: OnceLock<Kind> = OnceLock::new();
        *HERE.get_or_init(|| {
            let runs = Path::new(PERL_PATH).is_file()
                && std::process::Command::new(PERL_PATH)
                    .args(["-e", PROBE, "croupier-held"])
                    .arg(nix::libc::SYS_prctl.to_string())
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
            if runs {
                Kind::Perl
            } else {
                tracing::debug!("{PERL_PATH} does not run here: held sandboxes use the shell");
                Kind::Sh
            }
        })
    }

    /// The command a held sandbox runs. Its fourth word is
    /// `croupier-held` for both (tests find holders by it).
    pub fn command(self) -> Vec<String> {
        match self {
            Kind::Perl => vec![
                PERL_PATH.to_string(),
                "-e".to_string(),
                PERL.to_string(),
                "croupier-held".to_string(),
                CLEAR.to_string(),
                nix::libc::SYS_setsid.to_string(),
                nix::libc::SYS_prctl.to_string(),
                nix::libc::SYS_ioprio_get.to_string(),
            ],
            Kind::Sh => ["/bin/sh", "-c", SH, "croupier-held"]
                .map(String::from)
                .to_vec(),
        }
    }
}
