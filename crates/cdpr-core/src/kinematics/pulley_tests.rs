//! Swivel-pulley checks (in `pulley_tests/tests.rs`, a test file as the layer check sees it:
//! the statics and workspace checks there use higher layers).

#[cfg(test)]
mod tests;
