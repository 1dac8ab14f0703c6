//! Links the debug `cdpr` binary at a fixed address. The tests start it thousands of times (every
//! option of every command against hostile values, the guide's examples, the shadow and PLC
//! tests), and a position-independent executable of this size (Bevy, Rapier, Secure ADS) spends
//! about half of each start applying its 650 000 relocations: `cdpr --version` takes 40 ms as a
//! PIE, 21 ms linked at a fixed address. Release builds, the ones people run, stay PIE.

fn main() {
    println!("cargo:rerun-if-changed=src/build.rs");
    let debug = std::env::var("PROFILE").as_deref() == Ok("debug");
    let gnu_linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if debug && gnu_linux {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
