//! One rule for "this read or write waited out its timeout": a socket's timeout surfaces as
//! `WouldBlock` on Unix and `TimedOut` on Windows (and OpenSSL's WANT_READ as `WouldBlock`).

/// Whether `e` is a socket timeout (or a nonblocking call that found nothing), not a failure.
pub(crate) fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}
