//! A stop request that reaches a wait blocked inside the link: Ctrl-C or SIGTERM ends a run
//! within a fraction of a second even while a request waits out a 60 s `--timeout`, a TCP
//! connect waits for a host that drops its packets, or a TLS handshake waits for a silent
//! peer.
//!
//! Raising it sets a flag (what a run's loop polls) and shuts down every socket the link has
//! open ([`Interrupt::watch`]): a read or write blocked on one returns at once, whatever
//! library it is in (OpenSSL's handshake included), so no wait needs to be cut into slices.
//! A TCP connect has no socket to shut down until it is made: [`connect`] runs it on a thread
//! of its own and waits for it in slices of [`SLICE`].

use std::io;
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How often a connect in progress looks at the flag: how late a stop may end it.
pub const SLICE: Duration = Duration::from_millis(20);

/// A stop request shared by a run's loop, its link and the signal handler (clones share it).
#[derive(Debug, Clone, Default)]
pub struct Interrupt(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    raised: AtomicBool,
    next: AtomicU64,
    /// The link's open sockets (clones of them), by the id of their [`Watch`].
    sockets: Mutex<Vec<(u64, TcpStream)>>,
}

impl Interrupt {
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Asks everything that shares it to stop: the flag set, every watched socket shut down.
    pub fn raise(&self) {
        self.0.raised.store(true, Ordering::SeqCst);
        let sockets = self
            .0
            .sockets
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (_, s) in sockets.iter() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    pub fn raised(&self) -> bool {
        self.0.raised.load(Ordering::SeqCst)
    }

    /// The flag itself, for loops that take an `&AtomicBool` (`shadow::run`).
    pub fn flag(&self) -> &AtomicBool {
        &self.0.raised
    }

    /// Watches `stream` until the returned guard is dropped: raising shuts it down (at once,
    /// if raised already). A socket that cannot be cloned is not watched; its waits still end
    /// at their own deadlines.
    pub fn watch(&self, stream: &TcpStream) -> Option<Watch> {
        let clone = stream.try_clone().ok()?;
        let id = self.0.next.fetch_add(1, Ordering::Relaxed);
        self.0
            .sockets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((id, clone));
        // Raised while it was being registered: the loop above may have missed it.
        if self.raised() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        Some(Watch {
            interrupt: self.clone(),
            id,
        })
    }
}

/// A socket watched by an [`Interrupt`]; dropped, it is no longer.
#[derive(Debug)]
pub struct Watch {
    interrupt: Interrupt,
    id: u64,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.interrupt
            .0
            .sockets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(id, _)| *id != self.id);
    }
}

/// `TcpStream::connect_timeout`, given up when `interrupt` is raised (an `Interrupted` error
/// within [`SLICE`]).
pub fn connect(
    addr: SocketAddr,
    timeout: Duration,
    interrupt: &Interrupt,
) -> io::Result<TcpStream> {
    interrupt
        .wait_for(timeout, move || TcpStream::connect_timeout(&addr, timeout))
        .unwrap_or_else(|| Err(interrupted()))
}

impl Interrupt {
    /// Runs `work` (a blocking call that ends by itself within `within`, e.g. a connect or a
    /// UDP wait with that timeout) on a thread of its own and waits for it: `None` when the
    /// interrupt was raised first (noticed within [`SLICE`]; the thread then ends on its own,
    /// its result dropped), or when the thread could not be started or outlived `within` by
    /// a second.
    pub fn wait_for<T: Send + 'static>(
        &self,
        within: Duration,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        if self.raised() {
            return None;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("ads-wait".into())
            .spawn(move || {
                let _ = tx.send(work());
            })
            .ok()?;
        let started = Instant::now();
        loop {
            match rx.recv_timeout(SLICE) {
                Ok(result) => return Some(result),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if self.raised() || started.elapsed() > within + Duration::from_secs(1) {
                        return None;
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
    }
}

fn interrupted() -> io::Error {
    io::Error::new(
        io::ErrorKind::Interrupted,
        "interrupted (Ctrl-C or a signal)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    /// Raises `interrupt` from another thread after `wait`, as a signal handler does.
    fn raise_after(interrupt: &Interrupt, wait: Duration) -> std::thread::JoinHandle<()> {
        let interrupt = interrupt.clone();
        std::thread::spawn(move || {
            std::thread::sleep(wait);
            interrupt.raise();
        })
    }

    #[test]
    fn raising_ends_a_read_blocked_on_a_silent_peer_at_once() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let mut client = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (_server, _) = listener.accept().expect("accept");
        client
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let interrupt = Interrupt::new();
        let watch = interrupt.watch(&client).expect("watched");
        let raiser = raise_after(&interrupt, Duration::from_millis(100));
        let started = Instant::now();
        let mut buf = [0u8; 16];
        // A shut-down socket reads its end (0 bytes) or an error; never the 30 s timeout.
        let got = client.read(&mut buf);
        let took = started.elapsed();
        raiser.join().expect("raiser");
        assert!(matches!(got, Ok(0) | Err(_)), "{got:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        assert!(interrupt.raised());
        drop(watch);
        assert!(interrupt.0.sockets.lock().expect("lock").is_empty());
    }

    #[test]
    fn a_connect_to_a_host_that_drops_its_packets_is_given_up_when_raised() {
        // 10.255.255.1 is not routed on a test machine: the SYN goes nowhere (or the network
        // says unreachable at once, which ends the connect too: then there is nothing to cut).
        let addr: SocketAddr = "10.255.255.1:48898".parse().expect("addr");
        let interrupt = Interrupt::new();
        let raiser = raise_after(&interrupt, Duration::from_millis(100));
        let started = Instant::now();
        let got = connect(addr, Duration::from_secs(30), &interrupt);
        let took = started.elapsed();
        raiser.join().expect("raiser");
        assert!(got.is_err(), "connected to a black hole?");
        assert!(took < Duration::from_secs(5), "{took:?}");
        // Raised before: refused at once.
        let started = Instant::now();
        let again = connect(addr, Duration::from_secs(30), &interrupt);
        assert_eq!(
            again.map(|_| ()).map_err(|e| e.kind()),
            Err(io::ErrorKind::Interrupted)
        );
        assert!(started.elapsed() < Duration::from_millis(50));
    }
}
