//! Fewer wake-ups for a long answer: the socket's receive low-water mark.
//!
//! PostgreSQL sends a long result in 8 KiB pieces. A client that keeps up
//! is asleep when each one lands, so each costs a kernel wake-up of the
//! driver's thread, a read and a hand-off to the consumer; on a machine
//! where client and server share the CPUs the woken client also tends to
//! land on the server's CPU (a socket wake-up is a "sync" wake-up) and
//! preempt it there, hundreds of times per result (docs/benchmarks.md,
//! "Issue 30, part 2: stream rows/s, third attempt"). Once one answer has
//! brought [`RAISE_AFTER`] bytes, the driver sets `SO_RCVLOWAT` to
//! [`MARK`]: the kernel then wakes it once per 64 KiB instead of per
//! piece. The answer's tail is usually shorter than the mark and would
//! never wake it, so when the driver has waited [`TAIL`] with the mark up
//! it lowers the mark, and Linux signals readiness at once for the bytes
//! already there (`tcp_set_rcvlowat` calls `tcp_data_ready`, since Linux
//! 4.18; older kernels and other systems keep the plain behaviour). The
//! mark comes down as soon as the answer ends, so short answers behind it
//! never wait. The price: an answer longer than 1 MiB ends one tail wait
//! later. On Linux the wait is a quarter longer than the time a batch has
//! recently taken to arrive (100 us to 1 ms, on a [`TailTimer`] finer
//! than tokio's millisecond ticks); a wait that ends while the answer is
//! still streaming (a whole batch's worth arrives right after) doubles
//! the batch time and raises the mark again at once, to three quarters
//! of what arrived within the wait ([`BATCH_MIN`] at least): a server
//! too slow to send 64 KiB within the wait's bound would otherwise end
//! every batch with a tail wait (a timer wake-up and two `setsockopt`
//! calls). Each batch that then comes whole grows the mark by an eighth,
//! back up to [`MARK`]. A producer that trickles rows after its first
//! MiB has one such wait, not one per row.
//!
//! A connection whose answers are long again and again (a report read
//! every few seconds) raises the mark after [`EARLY_RAISE`] instead: when
//! the answers that got that far recently went on to [`LONG_ANSWER`] on
//! average, waiting for the first MiB only costs the wake-ups the mark is
//! there to save. Answers that barely pass [`EARLY_RAISE`] pull that
//! average down and keep the mark at [`RAISE_AFTER`].
//!
//! Such a connection often reads the same answer again (the same report,
//! the same export): on plain TCP, where the socket's bytes are the
//! answer's, the mark is aimed at the end of the last long answer once
//! that end is less than a batch away, so an answer of the same size
//! wakes the driver with its last byte instead of after a tail wait. An
//! answer that turns out longer costs one extra wake-up (the mark goes
//! back to a batch); one that ends sooner ends with the tail wait, as
//! without the aim.
//!
//! The same mark batches short answers when many are owed: with
//! [`DEEP_AT`] statements in flight, each with its own Sync, the server
//! flushes answer by answer and a driver that keeps up is woken for
//! nearly every one. Before it parks, the driver then raises the mark to
//! [`DEEP_BATCH`] answers' worth of bytes (at the connection's recent
//! average size) and keeps it up across answers until fewer than half of
//! [`DEEP_AT`] are owed. The tail wait covers a pipeline that goes quiet
//! (slow statements): after one, the mark stays down for [`DEEP_AT`]
//! answers.

use std::os::fd::RawFd;
use std::sync::OnceLock;
use std::task::Context;
use std::time::{Duration, Instant};

use crate::driver::counters::Counters;
use crate::driver::tail_timer::TailTimer;

/// Bytes of one answer after which the mark goes up: below this the
/// tail's wait would cost more than the wake-ups it saves.
const RAISE_AFTER: usize = 1 << 20;

/// Bytes of one answer after which the mark goes up when the
/// connection's answers that got this far went on, lately, to
/// [`LONG_ANSWER`] on average: such an answer then saves far more
/// wake-ups than its tail wait costs. (On PostgreSQL 18, 750 KB answers
/// read 0.88-0.90x xitca-postgres's rate raising at 1 MiB, 0.93x at 128
/// KiB and 64 KiB, 0.97-0.99x at 32 KiB, 0.93x at 16 KiB:
/// docs/benchmarks.md, "Issue 30, part 2: an earlier raise for a
/// connection's long answers".)
const EARLY_RAISE: usize = 32 << 10;

/// What the recent answers past [`EARLY_RAISE`] must average for the
/// mark to go up at [`EARLY_RAISE`]: sixteen times it, so that answers
/// which only just pass it (and would pay a tail wait for a wake-up or
/// two saved) keep the mark at [`RAISE_AFTER`].
const LONG_ANSWER: usize = 16 * EARLY_RAISE;

/// The low-water mark while raised: one full read (see
/// [`READ_CHUNK`](super::connection::READ_CHUNK)).
const MARK: libc::c_int = 64 * 1024;

/// The longest the driver waits with the mark up and nothing to read
/// before it lowers the mark for the answer's tail (and the only wait on
/// tokio's millisecond timer).
const TAIL: Duration = Duration::from_millis(1);

/// The shortest tail wait: below this the timer's own wake-ups would cost
/// more than the batches save.
const TAIL_MIN: Duration = Duration::from_micros(100);

/// Answers in flight from which the mark stays up between answers too.
/// With one Sync per statement the server flushes each answer on its own,
/// and a driver that keeps up is woken for nearly each one; a pipeline
/// this deep keeps the server sending, so waiting for a batch of answers
/// delays each by a fraction of what the pipeline ahead of it already
/// costs, and saves most of the wake-ups (docs/benchmarks.md, "Issue 30,
/// part 1: a deep pipeline read in batches").
const DEEP_AT: usize = 128;

/// Answers, of the connection's recent average size, a deep pipeline's
/// mark waits for: at most an eighth of those owed, so the wait adds at
/// most an eighth to what the pipeline ahead of an answer already costs
/// it. (Measured at 64 owed, a batch of 8 or 16 raised the p99 from about
/// 3.5 ms to 5.5; at 256 owed, 16 beat 32 on CPU and did not raise it.)
const DEEP_BATCH: usize = 16;

/// The smallest batch for one long answer: a tail wait that ends with
/// less than this come is the answer's end or a trickle, not a batch
/// that needed longer.
const BATCH_MIN: libc::c_int = MARK / 4;

/// The deep mark's floor in bytes (answers of a few bytes each).
const DEEP_MIN: usize = 64;

/// The mark's state for one connection's socket.
pub(crate) struct LowWater {
    /// The TCP socket (also under TLS); `None` where the mark is not used
    /// (Unix-domain sockets, kernels without the signal on lowering, a
    /// failed `setsockopt`).
    fd: Option<RawFd>,
    /// The user's choice ([`Connection::receive_low_water`](crate::Connection::receive_low_water)).
    on: bool,
    /// The mark's value while raised; 0 while down (the kernel's default,
    /// 1, is what "down" sets).
    mark: libc::c_int,
    /// The mark for one long answer's batches: [`MARK`], or less where
    /// the answers arrive too slowly for a batch that size to fill
    /// within the tail wait.
    batch: libc::c_int,
    /// The socket's bytes are the answers' bytes (plain TCP, not TLS):
    /// the mark can be aimed at an answer's end.
    exact: bool,
    /// Size of the last answer that got past [`EARLY_RAISE`]: where the
    /// current one is expected to end.
    last_long: usize,
    /// Bytes of the current answer read from the socket but not handed
    /// over yet (an incomplete message).
    unread: usize,
    /// Bytes of the current answer since it began or since the last tail
    /// wait.
    streamed: usize,
    /// Bytes of the current answer since it began.
    answer: usize,
    /// Recent size of the answers that got past [`EARLY_RAISE`] (a
    /// moving average, each weighing a quarter).
    long_avg: usize,
    /// Made at the first wait (it needs the runtime).
    tail: Option<TailTimer>,
    /// A read brought bytes since the tail timer was last set.
    rearm: bool,
    /// When the current tail wait began (the batch's fill time is
    /// measured from it).
    armed_at: Option<Instant>,
    /// Recent time a batch took to arrive, in microseconds (a moving
    /// average; the tail wait is a quarter longer).
    fill_us: u64,
    /// The last wait ended in a tail: the next read says whether the
    /// answer was still streaming.
    after_tail: bool,
    /// The mark is up for a deep pipeline (not for one long answer): it
    /// stays up across answers.
    deep: bool,
    /// Recent bytes per answer, times 16 (a moving average: each answer
    /// weighs an eighth), for the deep mark.
    avg_x16: usize,
    /// Answers to let pass before the deep mark may go up again after a
    /// tail wait.
    cooldown: usize,
}

impl LowWater {
    /// `exact`: the socket's bytes are the answers' bytes (no TLS).
    pub(crate) fn new(fd: Option<RawFd>, exact: bool) -> LowWater {
        LowWater {
            fd: fd.filter(|_| supported()),
            on: true,
            mark: 0,
            batch: MARK,
            exact,
            last_long: 0,
            unread: 0,
            streamed: 0,
            answer: 0,
            long_avg: 0,
            tail: None,
            rearm: true,
            armed_at: None,
            fill_us: TAIL.as_micros() as u64 / 2,
            after_tail: false,
            deep: false,
            avg_x16: 64 * 16,
            cooldown: 0,
        }
    }

    /// Uses the mark for long answers, or stops (lowering it first if it
    /// is up).
    pub(crate) fn turn(&mut self, on: bool, counters: &Counters) {
        if !on {
            self.set(false, counters);
            self.deep = false;
        }
        self.on = on;
    }

    /// `len` bytes of the answer at the front were handed over;
    /// `complete`: that answer ended.
    pub(crate) fn delivered(&mut self, len: usize, complete: bool, counters: &Counters) {
        if complete {
            let answer = self.answer.saturating_add(len);
            self.answer = 0;
            if answer >= EARLY_RAISE {
                self.long_avg = (self.long_avg / 4)
                    .saturating_mul(3)
                    .saturating_add(answer / 4);
                self.last_long = answer;
            }
            // The whole answer, tail waits or not. Saturating: an answer
            // of hundreds of MiB must not overflow a 32-bit usize (a
            // panic in a debug build).
            self.avg_x16 = self
                .avg_x16
                .saturating_mul(7)
                .saturating_add(answer.saturating_mul(16))
                / 8;
            self.cooldown = self.cooldown.saturating_sub(1);
            self.streamed = 0;
            if !self.deep {
                self.set(false, counters);
            }
        } else {
            self.streamed = self.streamed.saturating_add(len);
            self.answer = self.answer.saturating_add(len);
            if self.streamed >= self.raise_after() {
                self.set(true, counters);
            }
        }
    }

    /// Bytes of an answer after which the mark goes up: [`EARLY_RAISE`]
    /// where the connection's long answers have been long enough for the
    /// wake-ups saved to outweigh the tail wait, else [`RAISE_AFTER`].
    /// Only before this answer's first tail wait: a tail wait that ran
    /// out says the answer trickles, and a trickle pays one wait per
    /// [`RAISE_AFTER`], not one per [`EARLY_RAISE`].
    fn raise_after(&self) -> usize {
        let no_tail_yet = self.streamed == self.answer;
        if self.long_avg >= LONG_ANSWER && no_tail_yet {
            EARLY_RAISE
        } else {
            RAISE_AFTER
        }
    }

    /// After a read was routed: `unread` bytes of the current answer wait
    /// in the read buffer for the rest of their message.
    pub(crate) fn routed(&mut self, unread: usize) {
        self.unread = unread;
    }

    /// Before the driver parks: with the mark up for one long answer on
    /// plain TCP, aims it at where the last long answer ended, once that
    /// is less than a batch away, so the kernel wakes the driver when an
    /// answer of the same size is all there; a batch again past it.
    pub(crate) fn aim_at_end(&mut self, counters: &Counters) {
        if !self.raised() || self.deep || !self.exact {
            return;
        }
        let taken = self.answer.saturating_add(self.unread);
        let mark = match self.last_long.checked_sub(taken) {
            Some(rest) if rest > 0 && rest < self.batch as usize => rest as libc::c_int,
            _ => self.batch,
        };
        if mark != self.mark {
            self.set_to(mark, counters);
        }
    }

    /// Before the driver parks with `in_flight` answers owed: raises the
    /// mark to [`DEEP_BATCH`] answers' bytes when the pipeline is
    /// [`DEEP_AT`] deep, and lowers it once fewer than half that are owed.
    pub(crate) fn depth(&mut self, in_flight: usize, counters: &Counters) {
        if in_flight >= DEEP_AT {
            if !self.raised() && self.cooldown == 0 {
                let bytes = self.avg_x16.saturating_mul(DEEP_BATCH) / 16;
                let mark = bytes.clamp(DEEP_MIN, MARK as usize);
                self.deep = self.set_to(mark as libc::c_int, counters);
            }
        } else if self.deep && in_flight < DEEP_AT / 2 {
            self.deep = false;
            self.set(false, counters);
        }
    }

    /// A read brought `bytes` (already routed): the tail wait starts over
    /// from the next park, and the time since the last one began is how
    /// long a batch took.
    pub(crate) fn read_something(&mut self, bytes: usize, counters: &Counters) {
        self.rearm = true;
        if let Some(at) = self.armed_at.take() {
            let took = (at.elapsed().as_micros() as u64).min(TAIL.as_micros() as u64);
            self.fill_us = (self.fill_us * 3 + took) / 4;
        }
        let after_tail = std::mem::take(&mut self.after_tail);
        if after_tail && !self.deep && self.streamed > 0 && bytes >= BATCH_MIN as usize {
            // The wait ended with the answer still streaming (a good part
            // of a batch had arrived): wait longer next time, batch on
            // what arrives within the wait, and batch again now instead
            // of after another MiB.
            self.fill_us = (self.fill_us * 2).min(TAIL.as_micros() as u64 / 2);
            self.batch = (bytes * 3 / 4).clamp(BATCH_MIN as usize, MARK as usize) as libc::c_int;
            self.set(true, counters);
        } else if !after_tail && self.raised() && !self.deep && self.batch < MARK {
            // A batch came whole before the wait ran out: a larger one
            // next time, back up to MARK.
            let grown = (self.batch + self.batch / 8).min(MARK);
            if self.mark == self.batch {
                self.set_to(grown, counters);
            }
            self.batch = grown;
        }
    }

    /// Called before the driver parks. Returns true when the tail wait
    /// ran out and the mark came down: the kernel signals the bytes that
    /// wait, so the driver should poll its read again.
    pub(crate) fn poll_tail(&mut self, cx: &mut Context<'_>, counters: &Counters) -> bool {
        if !self.raised() {
            return false;
        }
        let tail = self.tail.get_or_insert_with(TailTimer::new);
        if self.rearm {
            tail.arm(tail_wait(self.fill_us, tail.is_fine()));
            self.armed_at = Some(Instant::now());
            self.rearm = false;
        }
        if tail.poll_ended(cx).is_pending() {
            return false;
        }
        counters.low_water_tail();
        self.armed_at = None;
        self.after_tail = true;
        // Another MiB (or EARLY_RAISE) before the mark goes up again: a
        // producer that trickles pays this wait once per that many
        // bytes, not once per row.
        self.streamed = 0;
        if self.deep {
            // A deep pipeline that went quiet (slow statements): answer
            // by answer for a while, so each slow one is not kept back.
            self.deep = false;
            self.cooldown = DEEP_AT;
        }
        self.set(false, counters);
        true
    }

    /// The mark is up.
    fn raised(&self) -> bool {
        self.mark != 0
    }

    fn set(&mut self, raise: bool, counters: &Counters) {
        if raise == self.raised() || (raise && !self.on) {
            return;
        }
        self.set_to(if raise { self.batch } else { 1 }, counters);
    }

    fn set_to(&mut self, value: libc::c_int, counters: &Counters) -> bool {
        let raise = value > 1;
        if raise && !self.on {
            return false;
        }
        let Some(fd) = self.fd else {
            self.mark = 0;
            return false;
        };
        // SAFETY: `fd` is the connection's socket, open for as long as
        // the driver (which owns the stream) lives; the option's value is
        // a c_int of the size passed.
        let rc = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVLOWAT,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            let was_raised = self.raised();
            self.mark = if raise { value } else { 0 };
            if raise {
                // A fresh tail wait for each raise (and each new aim): one
                // that ran out before must not lower this mark at once
                // (and again, in a loop, with a deep pipeline raising it
                // each time).
                self.rearm = true;
                if !was_raised {
                    counters.low_water_raised();
                }
            }
        } else {
            // The socket refused (only a socket the kernel no longer
            // knows does): read as before. The mark goes down with it, or
            // the tail wait, finding the mark still up, would report it
            // lowered on every poll and the driver would spin.
            self.fd = None;
            self.mark = 0;
        }
        rc == 0
    }
}

/// How long to wait with the mark up and nothing read, when a batch
/// recently took `fill_us`: a quarter more on a fine timer (a wait that
/// ends too soon is caught by the mid-stream rule in
/// [`LowWater::read_something`]), [`TAIL`] on
/// tokio's.
fn tail_wait(fill_us: u64, fine: bool) -> Duration {
    if !fine {
        return TAIL;
    }
    Duration::from_micros(fill_us.saturating_mul(5) / 4).clamp(TAIL_MIN, TAIL)
}

/// Whether the kernel signals readiness when the mark is lowered over
/// bytes already queued: Linux 4.18 or later.
fn supported() -> bool {
    static SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SUPPORTED.get_or_init(|| cfg!(target_os = "linux") && kernel_at_least(4, 18))
}

fn kernel_at_least(major: u32, minor: u32) -> bool {
    // SAFETY: `uname` fills the zeroed struct; its fields are
    // NUL-terminated strings.
    let release = unsafe {
        let mut name: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut name) != 0 {
            return false;
        }
        std::ffi::CStr::from_ptr(name.release.as_ptr())
            .to_string_lossy()
            .into_owned()
    };
    release_at_least(&release, major, minor)
}

/// Whether a kernel release string such as `6.1.0-18-amd64` is at least
/// `major.minor`.
fn release_at_least(release: &str, major: u32, minor: u32) -> bool {
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(a), Some(b)) => (a, b) >= (major, minor),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    use super::*;

    /// A connected pair of real TCP sockets on loopback: (ours, the peer).
    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let ours = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (peer, _) = listener.accept().unwrap();
        (ours, peer)
    }

    /// Our socket of a fresh pair, the peer, and a mark on ours; `None`
    /// where the kernel lacks what the mark relies on (nothing to test).
    fn socket_with_mark() -> Option<(TcpStream, TcpStream, Counters, LowWater)> {
        if !supported() {
            return None;
        }
        let (ours, peer) = pair();
        let mut low = LowWater::new(Some(ours.as_raw_fd()), true);
        // tokio's timer: these tests drive the clock by hand (the fine
        // timer has its own tests, on the real clock).
        low.tail = Some(TailTimer::coarse());
        Some((ours, peer, Counters::default(), low))
    }

    /// The socket's SO_RCVLOWAT as the kernel holds it.
    fn mark(socket: &TcpStream) -> libc::c_int {
        let mut value: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: an open socket; value and len are valid for the call.
        let rc = unsafe {
            libc::getsockopt(
                socket.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVLOWAT,
                (&mut value as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        assert_eq!(rc, 0);
        value
    }

    /// Whether poll(2) reports the socket readable right now.
    fn readable(socket: &TcpStream) -> bool {
        let mut fd = libc::pollfd {
            fd: socket.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no wait.
        let n = unsafe { libc::poll(&mut fd, 1, 0) };
        n == 1 && fd.revents & libc::POLLIN != 0
    }

    #[test]
    fn the_mark_goes_up_past_a_mib_and_down_when_the_answer_ends() {
        let Some((ours, _peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        low.delivered(RAISE_AFTER - 1, false, &counters);
        assert_eq!(mark(&ours), 1, "up before a MiB");
        low.delivered(1, false, &counters);
        assert_eq!(mark(&ours), MARK);
        assert_eq!(counters.low_water(), (1, 0));
        low.delivered(10, true, &counters);
        assert_eq!(mark(&ours), 1, "still up after the answer ended");
        // The next answer starts from nothing.
        low.delivered(RAISE_AFTER / 2, false, &counters);
        assert_eq!(mark(&ours), 1);
    }

    /// Completes one answer of `bytes`, in pieces of at most 8 KiB as
    /// the server sends them; returns the mark seen after each piece.
    fn one_answer(
        low: &mut LowWater,
        ours: &TcpStream,
        counters: &Counters,
        bytes: usize,
    ) -> Vec<libc::c_int> {
        let mut marks = Vec::new();
        let mut left = bytes;
        while left > 8192 {
            low.delivered(8192, false, counters);
            marks.push(mark(ours));
            left -= 8192;
        }
        low.delivered(left, true, counters);
        marks
    }

    /// After a few long answers the mark goes up after EARLY_RAISE bytes
    /// of the next one; answers that only just pass EARLY_RAISE bring it
    /// back to a MiB.
    #[test]
    fn a_connection_whose_answers_are_long_raises_the_mark_early() {
        let Some((ours, _peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        let raised_after = |marks: &[libc::c_int]| {
            marks
                .iter()
                .position(|&m| m == MARK)
                .map(|i| (i + 1) * 8192)
        };
        // The first long answer: up after a MiB only.
        let marks = one_answer(&mut low, &ours, &counters, 3 * RAISE_AFTER / 2);
        assert_eq!(raised_after(&marks), Some(RAISE_AFTER));
        assert_eq!(mark(&ours), 1, "still up after the answer ended");
        // Two more, and the connection's long answers average well past
        // LONG_ANSWER: the fourth goes up after EARLY_RAISE.
        for _ in 0..2 {
            one_answer(&mut low, &ours, &counters, 3 * RAISE_AFTER / 2);
        }
        let marks = one_answer(&mut low, &ours, &counters, 3 * RAISE_AFTER / 2);
        assert_eq!(raised_after(&marks), Some(EARLY_RAISE));
        // Short answers, under EARLY_RAISE, change nothing.
        for _ in 0..50 {
            let marks = one_answer(&mut low, &ours, &counters, EARLY_RAISE - 1);
            assert_eq!(raised_after(&marks), None);
        }
        let marks = one_answer(&mut low, &ours, &counters, 3 * RAISE_AFTER / 2);
        assert_eq!(raised_after(&marks), Some(EARLY_RAISE));
        // Answers just past EARLY_RAISE (each raises the mark and would
        // pay a tail wait) pull the average down: back to a MiB.
        for _ in 0..8 {
            one_answer(&mut low, &ours, &counters, EARLY_RAISE * 2);
        }
        let marks = one_answer(&mut low, &ours, &counters, 3 * RAISE_AFTER / 2);
        assert_eq!(raised_after(&marks), Some(RAISE_AFTER));
    }

    /// Writes `bytes` bytes to the peer.
    fn send(peer: &TcpStream, bytes: usize) {
        use std::io::Write;
        (&*peer).write_all(&vec![b'D'; bytes]).unwrap();
    }

    /// On plain TCP, once a connection's long answers raise the mark
    /// early, the mark is aimed at the last long answer's end when that
    /// is under a batch away (counting the bytes read but not handed
    /// over), and the kernel then wakes the reader with the answer's
    /// last byte, not one before; past that end it is a batch again.
    #[test]
    fn the_mark_is_aimed_at_the_end_of_an_answer_as_long_as_the_last() {
        let Some((ours, peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        let size = 3 * RAISE_AFTER / 2 + 123;
        for _ in 0..3 {
            one_answer(&mut low, &ours, &counters, size);
        }
        let raises = counters.low_water().0;
        // The next answer of the same size, up to 100 KiB short of its end.
        let mut taken = 0;
        while taken + 8192 <= size - 100 * 1024 {
            low.delivered(8192, false, &counters);
            low.routed(0);
            low.aim_at_end(&counters);
            taken += 8192;
            let expected = if taken >= EARLY_RAISE { MARK } else { 1 };
            assert_eq!(
                mark(&ours),
                expected,
                "{} bytes before the end",
                size - taken
            );
        }
        assert_eq!(counters.low_water().0, raises + 1);
        // Within a batch of the end: 70 bytes of a message wait for the
        // rest of it, and the mark is the rest of the answer.
        while size - taken >= MARK as usize {
            low.delivered(8192, false, &counters);
            taken += 8192;
        }
        low.routed(70);
        low.aim_at_end(&counters);
        let rest = size - taken - 70;
        assert_eq!(mark(&ours) as usize, rest);
        assert_eq!(
            counters.low_water().0,
            raises + 1,
            "an aim counted as a raise"
        );
        send(&peer, rest - 1);
        std::thread::sleep(Duration::from_millis(50));
        assert!(!readable(&ours), "woken a byte before the end");
        send(&peer, 1);
        let woken = (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(5));
            readable(&ours)
        });
        assert!(woken, "not woken at the end");
        // The answer is longer after all: past the aim, a batch again.
        low.routed(0);
        low.delivered(rest + 70 + 8192, false, &counters);
        low.aim_at_end(&counters);
        assert_eq!(mark(&ours), MARK);
        low.delivered(10, true, &counters);
        assert_eq!(mark(&ours), 1);
        assert_eq!(low.last_long, size + 8192 + 10);
    }

    /// Under TLS the socket's bytes are records, not the answer's: the
    /// mark stays a batch to the end (the tail wait lowers it).
    #[test]
    fn under_tls_the_mark_is_not_aimed() {
        let Some((ours, _peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        low.exact = false;
        let size = 3 * RAISE_AFTER / 2 + 123;
        for _ in 0..3 {
            one_answer(&mut low, &ours, &counters, size);
        }
        let mut taken = 0;
        while size - taken > 8192 {
            low.delivered(8192, false, &counters);
            low.routed(0);
            low.aim_at_end(&counters);
            taken += 8192;
            if taken >= EARLY_RAISE {
                assert_eq!(mark(&ours), MARK);
            }
        }
    }

    /// Answers of hundreds of MiB overflow nothing.
    #[test]
    fn huge_answers_do_not_overflow_the_long_answer_average() {
        let counters = Counters::default();
        let mut low = LowWater::new(None, true);
        for _ in 0..4 {
            low.delivered(usize::MAX / 2, false, &counters);
            low.delivered(usize::MAX / 2, true, &counters);
        }
        assert!(low.long_avg >= LONG_ANSWER);
        assert_eq!(low.raise_after(), EARLY_RAISE);
    }

    #[test]
    fn turned_off_it_comes_down_and_stays_down() {
        let Some((ours, _peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        low.delivered(RAISE_AFTER, false, &counters);
        assert_eq!(mark(&ours), MARK);
        low.turn(false, &counters);
        assert_eq!(mark(&ours), 1);
        low.delivered(RAISE_AFTER, false, &counters);
        assert_eq!(mark(&ours), 1);
        low.turn(true, &counters);
        low.delivered(1, false, &counters);
        assert_eq!(mark(&ours), MARK);
    }

    /// What the tail wait relies on: bytes below the mark do not make the
    /// socket readable, and lowering the mark does at once.
    #[test]
    fn bytes_below_the_mark_become_readable_when_it_comes_down() {
        use std::io::Write;
        let Some((ours, mut peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        low.delivered(RAISE_AFTER, false, &counters);
        peer.write_all(&[7u8; 100]).unwrap();
        // Loopback delivers within the write; allow the kernel a moment
        // anyway by polling until the bytes are counted as queued.
        let queued = || {
            let mut n: libc::c_int = 0;
            // SAFETY: FIONREAD into a c_int on an open socket.
            unsafe { libc::ioctl(ours.as_raw_fd(), libc::FIONREAD, &mut n) };
            n
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while queued() < 100 && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert_eq!(queued(), 100);
        assert!(
            !readable(&ours),
            "100 bytes under a 64 KiB mark read as ready"
        );
        low.delivered(0, true, &counters);
        assert!(readable(&ours));
    }

    /// Completes `n` answers of `bytes` each (the average's input).
    fn answers(low: &mut LowWater, counters: &Counters, n: usize, bytes: usize) {
        for _ in 0..n {
            low.delivered(bytes, true, counters);
        }
    }

    #[test]
    fn a_deep_pipeline_raises_the_mark_to_a_batch_of_answers_and_a_shallow_one_lowers_it() {
        let Some((ours, _peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        // The average settles on the answers' size.
        answers(&mut low, &counters, 64, 100);
        low.depth(DEEP_AT - 1, &counters);
        assert_eq!(mark(&ours), 1, "up for a shallow pipeline");
        low.depth(DEEP_AT, &counters);
        let raised = mark(&ours);
        let batch = (DEEP_BATCH * 100) as libc::c_int;
        assert!(
            (batch * 9 / 10..=batch).contains(&raised),
            "mark {raised}, expected about {batch}"
        );
        // It stays up across answers while the pipeline stays deep, and
        // above half the depth.
        answers(&mut low, &counters, 10, 100);
        low.depth(DEEP_AT / 2, &counters);
        assert_eq!(mark(&ours), raised);
        assert_eq!(counters.low_water(), (1, 0), "raised once");
        low.depth(DEEP_AT / 2 - 1, &counters);
        assert_eq!(mark(&ours), 1);
        // Huge answers overflow neither the average nor the mark.
        answers(&mut low, &counters, 2, usize::MAX / 2);
        low.depth(DEEP_AT, &counters);
        assert_eq!(mark(&ours), MARK);
        low.depth(0, &counters);
        assert_eq!(mark(&ours), 1);
        // Large answers: the mark is capped at one full read.
        answers(&mut low, &counters, 64, 100_000);
        low.depth(DEEP_AT, &counters);
        assert_eq!(mark(&ours), MARK);
    }

    #[test]
    fn turned_off_a_deep_pipeline_reads_answer_by_answer() {
        let Some((ours, _peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        low.turn(false, &counters);
        low.depth(DEEP_AT * 4, &counters);
        assert_eq!(mark(&ours), 1);
    }

    /// A deep pipeline that goes quiet (its statements are slow): the tail
    /// wait lowers the mark, and it stays down for DEEP_AT answers so the
    /// slow ones are each read at once.
    #[tokio::test(start_paused = true)]
    async fn a_deep_pipeline_gone_quiet_is_read_answer_by_answer_for_a_while() {
        let Some((ours, _peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        low.depth(DEEP_AT, &counters);
        assert!(mark(&ours) > 1);
        assert!(!poll_once(&mut low, &counters).await);
        tokio::time::advance(TAIL * 2).await;
        assert!(poll_once(&mut low, &counters).await, "no tail wait");
        assert_eq!(mark(&ours), 1);
        answers(&mut low, &counters, DEEP_AT - 1, 100);
        low.depth(DEEP_AT, &counters);
        assert_eq!(mark(&ours), 1, "up again within the cool-down");
        answers(&mut low, &counters, 1, 100);
        low.depth(DEEP_AT, &counters);
        assert!(mark(&ours) > 1, "not up again after the cool-down");
    }

    /// One poll of the tail wait.
    async fn poll_once(low: &mut LowWater, counters: &Counters) -> bool {
        std::future::poll_fn(|cx| std::task::Poll::Ready(low.poll_tail(cx, counters))).await
    }

    /// With the mark up and nothing read for TAIL, the tail wait lowers
    /// it, counts once, and needs another MiB before the mark goes up
    /// again; a read in between starts the wait over.
    #[tokio::test(start_paused = true)]
    async fn the_tail_wait_lowers_the_mark_after_a_quiet_millisecond() {
        let Some((ours, _peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        low.delivered(RAISE_AFTER, false, &counters);
        assert!(
            !poll_once(&mut low, &counters).await,
            "the wait ran out at once"
        );
        tokio::time::advance(TAIL / 2).await;
        low.read_something(0, &counters);
        assert!(!poll_once(&mut low, &counters).await);
        tokio::time::advance(TAIL * 3 / 4).await;
        assert!(
            !poll_once(&mut low, &counters).await,
            "a read did not start the wait over"
        );
        assert_eq!(mark(&ours), MARK);
        tokio::time::advance(TAIL).await;
        assert!(poll_once(&mut low, &counters).await);
        assert_eq!(mark(&ours), 1);
        assert_eq!(counters.low_water(), (1, 1));
        low.delivered(RAISE_AFTER - 1, false, &counters);
        assert_eq!(mark(&ours), 1, "up again before another MiB");
        low.delivered(1, false, &counters);
        assert_eq!(mark(&ours), MARK);
    }

    /// The fine tail wait is a quarter longer than a recent batch's time,
    /// within 100 us..1 ms; tokio's timer always waits [`TAIL`].
    #[test]
    fn the_tail_wait_is_a_recent_batch_and_a_quarter_within_its_bounds() {
        for (fill_us, wait_us) in [(0, 100), (40, 100), (200, 250), (600, 750), (10_000, 1_000)] {
            assert_eq!(
                tail_wait(fill_us, true),
                Duration::from_micros(wait_us),
                "batches of {fill_us} us"
            );
            assert_eq!(tail_wait(fill_us, false), TAIL);
        }
    }

    /// Each read after a wait began is a batch's time: the average
    /// follows it (here a wait that began at least 2 ms ago, which
    /// counts as the longest, 1 ms).
    #[test]
    fn a_reads_time_since_the_wait_began_moves_the_batch_average() {
        let counters = Counters::default();
        let mut low = LowWater::new(None, true);
        low.fill_us = 100;
        low.armed_at = Instant::now().checked_sub(Duration::from_millis(2));
        low.read_something(10, &counters);
        assert_eq!(low.fill_us, (100 * 3 + 1_000) / 4);
        // No wait began since: nothing to measure.
        low.read_something(10, &counters);
        assert_eq!(low.fill_us, (100 * 3 + 1_000) / 4);
    }

    /// A tail wait that ends while the answer still streams (a quarter of
    /// a batch or more arrives at once, and the answer goes on) raises
    /// the mark again at once (to the smallest batch: what arrived) and
    /// doubles the wait; a trickle (a few bytes) keeps it down for
    /// another MiB.
    #[tokio::test(start_paused = true)]
    async fn a_tail_wait_that_ends_mid_stream_batches_again_at_once() {
        let Some((ours, _peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        low.fill_us = 200;
        low.delivered(RAISE_AFTER, false, &counters);
        assert!(!poll_once(&mut low, &counters).await);
        tokio::time::advance(TAIL * 2).await;
        assert!(poll_once(&mut low, &counters).await, "no tail wait");
        assert_eq!(mark(&ours), 1);
        low.armed_at = None;
        let batch = MARK as usize / 4;
        low.delivered(batch, false, &counters);
        low.read_something(batch, &counters);
        assert_eq!(mark(&ours), BATCH_MIN, "not raised again mid-stream");
        assert_eq!(low.fill_us, 400, "the wait did not grow");
        // The same with a trickle: down until another MiB.
        assert!(!poll_once(&mut low, &counters).await);
        tokio::time::advance(TAIL * 2).await;
        assert!(poll_once(&mut low, &counters).await, "no tail wait");
        low.armed_at = None;
        low.delivered(100, false, &counters);
        low.read_something(100, &counters);
        assert_eq!(mark(&ours), 1, "raised again for a trickle");
        assert_eq!(low.fill_us, 400);
        // And an answer that ended in that read stays down too.
        low.delivered(RAISE_AFTER, false, &counters);
        assert!(!poll_once(&mut low, &counters).await);
        tokio::time::advance(TAIL * 2).await;
        assert!(poll_once(&mut low, &counters).await, "no tail wait");
        low.delivered(batch, true, &counters);
        low.read_something(batch, &counters);
        assert_eq!(mark(&ours), 1, "raised again after the answer ended");
    }

    /// An answer that comes too slowly for a 64 KiB batch to fill within
    /// the tail wait: the wait ends with 40 KiB there, the mark goes back
    /// up to three quarters of that, and each batch that then comes whole
    /// before the wait ends grows it by an eighth, up to [`MARK`]. The
    /// next answer starts at the batch reached.
    #[tokio::test(start_paused = true)]
    async fn a_slow_answer_batches_on_what_arrives_within_the_wait_and_grows_back() {
        let Some((ours, _peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        low.delivered(RAISE_AFTER, false, &counters);
        assert_eq!(mark(&ours), MARK);
        assert!(!poll_once(&mut low, &counters).await);
        tokio::time::advance(TAIL * 2).await;
        assert!(poll_once(&mut low, &counters).await, "no tail wait");
        low.armed_at = None;
        low.delivered(40 << 10, false, &counters);
        low.read_something(40 << 10, &counters);
        let mut expected = 30 << 10;
        assert_eq!(mark(&ours), expected, "not batched on what came");
        let mut grown = 0;
        while expected < MARK {
            low.delivered(expected as usize, false, &counters);
            low.read_something(expected as usize, &counters);
            expected = (expected + expected / 8).min(MARK);
            grown += 1;
            assert_eq!(mark(&ours), expected, "after {grown} whole batches");
        }
        assert_eq!(grown, 7);
        assert_eq!(counters.low_water(), (2, 1), "a growth counted as a raise");
        // A slow one again, then the answer ends: the next starts there.
        assert!(!poll_once(&mut low, &counters).await);
        tokio::time::advance(TAIL * 2).await;
        assert!(poll_once(&mut low, &counters).await, "no tail wait");
        low.delivered(20 << 10, false, &counters);
        low.read_something(20 << 10, &counters);
        assert_eq!(mark(&ours), BATCH_MIN);
        low.delivered(10, true, &counters);
        assert_eq!(mark(&ours), 1);
        low.delivered(RAISE_AFTER, false, &counters);
        assert_eq!(mark(&ours), BATCH_MIN);
    }

    /// On a connection whose answers are long the mark goes up early,
    /// but once a tail wait ran out in an answer (it trickles) the next
    /// raise in that answer waits for a MiB again; the answer after it
    /// goes up early again.
    #[tokio::test(start_paused = true)]
    async fn a_trickle_after_an_early_raise_waits_a_mib_for_the_next() {
        let Some((ours, _peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        for _ in 0..3 {
            one_answer(&mut low, &ours, &counters, 3 * RAISE_AFTER / 2);
        }
        low.delivered(EARLY_RAISE, false, &counters);
        assert_eq!(mark(&ours), MARK, "not up early");
        assert!(!poll_once(&mut low, &counters).await);
        tokio::time::advance(TAIL * 2).await;
        assert!(poll_once(&mut low, &counters).await, "no tail wait");
        assert_eq!(mark(&ours), 1);
        low.armed_at = None;
        let mut trickled = 0;
        while trickled + 100 < RAISE_AFTER {
            low.delivered(100, false, &counters);
            low.read_something(100, &counters);
            trickled += 100;
            assert_eq!(
                mark(&ours),
                1,
                "up again after {trickled} bytes of a trickle"
            );
        }
        low.delivered(RAISE_AFTER - trickled, false, &counters);
        assert_eq!(mark(&ours), MARK, "not up after a MiB of a trickle");
        low.delivered(10, true, &counters);
        assert_eq!(mark(&ours), 1);
        low.delivered(EARLY_RAISE, false, &counters);
        assert_eq!(mark(&ours), MARK, "the next answer not up early");
    }

    /// A mark the socket refuses to lower (the descriptor gone) is taken
    /// as down: the tail wait reports it once, then lets the driver park
    /// instead of reporting it lowered on every poll.
    #[tokio::test(start_paused = true)]
    async fn a_mark_that_cannot_be_lowered_does_not_make_the_driver_spin() {
        let Some((ours, _peer, counters, mut low)) = socket_with_mark() else {
            return;
        };
        low.delivered(RAISE_AFTER, false, &counters);
        assert_eq!(mark(&ours), MARK);
        // No descriptor is -1: setsockopt fails with EBADF.
        low.fd = Some(-1);
        assert!(!poll_once(&mut low, &counters).await);
        tokio::time::advance(TAIL * 2).await;
        assert!(poll_once(&mut low, &counters).await);
        assert!(
            !poll_once(&mut low, &counters).await,
            "the tail wait reported the mark lowered again: the driver would spin"
        );
        assert_eq!(counters.low_water(), (1, 1));
    }

    #[test]
    fn kernel_releases_compare_by_major_then_minor() {
        assert!(release_at_least("6.1.0-18-amd64", 4, 18));
        assert!(release_at_least("4.18.0-513.el8.x86_64", 4, 18));
        assert!(release_at_least("5.4.0", 4, 18));
        assert!(!release_at_least("4.15.0-213-generic", 4, 18));
        assert!(!release_at_least("3.10.0-1160.el7.x86_64", 4, 18));
        assert!(!release_at_least("", 4, 18));
        assert!(!release_at_least("linux", 4, 18));
    }
}
