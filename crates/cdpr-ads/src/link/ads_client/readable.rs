//! Waiting for a socket to have bytes to read, until a deadline, to the microsecond.
//!
//! A read timeout (`SO_RCVTIMEO`) cannot do it: Linux rounds it up to the scheduler's tick (4 ms
//! at HZ = 250), longer than a 1 ms PLC cycle. `ppoll` waits on a high-resolution timer; other
//! Unixes have `poll`, to the millisecond (the wait is cut short, never made longer: the caller
//! runs its cycle at the deadline either way). Elsewhere the caller is told nothing arrived and
//! sleeps: its cycle then takes the samples at its own period.

use std::net::TcpStream;
use std::time::Instant;

/// Whether `stream` has bytes to read (or its peer closed it) before `until`; waits at most
/// until then. Errors of the wait itself count as "readable": the read that follows reports
/// what is wrong with the socket.
#[cfg(unix)]
pub(super) fn wait(stream: &TcpStream, until: Instant) -> bool {
    use nix::poll::{PollFd, PollFlags};
    use std::os::fd::AsFd;
    let left = until.saturating_duration_since(Instant::now());
    let mut fds = [PollFd::new(stream.as_fd(), PollFlags::POLLIN)];
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let ready = nix::poll::ppoll(&mut fds, Some(left.into()), None);
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let ready = nix::poll::poll(
        &mut fds,
        nix::poll::PollTimeout::try_from(left.as_millis().min(60_000) as i32)
            .unwrap_or(nix::poll::PollTimeout::ZERO),
    );
    match ready {
        Ok(n) => n > 0,
        Err(nix::errno::Errno::EINTR) => false,
        Err(_) => true,
    }
}

#[cfg(not(unix))]
pub(super) fn wait(_stream: &TcpStream, until: Instant) -> bool {
    std::thread::sleep(until.saturating_duration_since(Instant::now()));
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;
    use std::time::Duration;

    #[test]
    fn waits_to_the_deadline_when_quiet_and_wakes_when_bytes_arrive() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let client = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (mut server, _) = listener.accept().expect("accept");
        // Quiet: back at the deadline, 1.5 ms on, not a 4 ms scheduler tick later.
        let mut late = Vec::new();
        for _ in 0..20 {
            let start = Instant::now();
            let until = start + Duration::from_micros(1500);
            assert!(!wait(&client, until), "nothing to read");
            late.push(Instant::now().saturating_duration_since(until));
        }
        late.sort();
        assert!(
            late[10] < Duration::from_micros(2500),
            "median {:?} late",
            late[10]
        );
        // Bytes on the way: woken long before a 1 s deadline.
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            server.write_all(b"x").expect("write");
            server
        });
        let start = Instant::now();
        assert!(wait(&client, start + Duration::from_secs(1)));
        assert!(start.elapsed() < Duration::from_millis(500));
        drop(writer.join());
    }
}
