//! A labelled corpus: realistic secrets in their usual contexts, and near
//! misses that must pass. Every sample is assembled at test time from parts
//! and pseudo-random bodies, so this repository holds no token a secret
//! scanner would flag.
//!
//! `cargo test --lib secrets -- --nocapture` prints the figures.

mod caught;
mod passed;

/// The near misses every gate must let through (`memory::gate`'s tests).
pub(crate) fn near_misses() -> Vec<String> {
    passed::near_misses()
}

use super::{find_secret, redact};

pub(super) fn k(parts: &[&str]) -> String {
    parts.concat()
}

pub(super) const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub(super) const HEX: &str = "0123456789abcdef";
pub(super) const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub(super) const URL64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
pub(super) const B32: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
pub(super) const DIGITS: &str = "0123456789";

/// `n` characters of `alphabet`, the same for the same seed (xorshift64*).
pub(super) fn rand(seed: u64, n: usize, alphabet: &str) -> String {
    let alphabet = alphabet.as_bytes();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
            alphabet[(r >> 33) as usize % alphabet.len()] as char
        })
        .collect()
}

pub(super) fn an(seed: u64, n: usize) -> String {
    rand(seed, n, ALNUM)
}
pub(super) fn hx(seed: u64, n: usize) -> String {
    rand(seed, n, HEX)
}
pub(super) fn b64(seed: u64, n: usize) -> String {
    rand(seed, n, B64)
}
pub(super) fn u64s(seed: u64, n: usize) -> String {
    rand(seed, n, URL64)
}
pub(super) fn digits(seed: u64, n: usize) -> String {
    // No leading zero, as in ids.
    let tail = rand(seed, n.saturating_sub(1), DIGITS);
    format!("{}{tail}", 1 + seed % 9)
}
pub(super) fn uuid(seed: u64) -> String {
    let h = hx(seed, 32);
    format!("{}-{}-4{}-a{}-{}", &h[..8], &h[8..12], &h[13..16], &h[17..20], &h[20..])
}

/// Standard base64 with padding, for `Authorization: Basic` samples.
pub(super) fn base64(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, &c| n << 8 | c as u32) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64.as_bytes()[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn the_corpus_is_caught_and_its_near_misses_pass() {
    let secrets = caught::secrets();
    let near_misses = passed::near_misses();
    let mut missed = Vec::new();
    let mut wrong_kind = Vec::new();
    for (text, want) in &secrets {
        match find_secret(text) {
            None => missed.push(text.as_str()),
            Some(kind) if kind != *want => wrong_kind.push(format!("{text:?}: {kind}, want {want}")),
            Some(_) => assert!(!redact(text).contains(text.as_str())),
        }
    }
    let flagged: Vec<String> =
        near_misses.iter().filter_map(|text| find_secret(text).map(|kind| format!("{text:?}: {kind}"))).collect();
    eprintln!(
        "secrets: {} caught of {}; near-misses: {} passed of {}",
        secrets.len() - missed.len(),
        secrets.len(),
        near_misses.len() - flagged.len(),
        near_misses.len()
    );
    assert!(secrets.len() >= 150 && near_misses.len() >= 150, "{} {}", secrets.len(), near_misses.len());
    assert!(missed.is_empty(), "missed:\n{}", missed.join("\n"));
    assert!(flagged.is_empty(), "refused near-misses:\n{}", flagged.join("\n"));
    assert!(wrong_kind.is_empty(), "wrong kind:\n{}", wrong_kind.join("\n"));
}

#[test]
fn base64_helper_matches_the_standard() {
    assert_eq!(base64("deploy:pw"), "ZGVwbG95OnB3");
    assert_eq!(base64("a:b"), "YTpi");
    assert_eq!(base64("ab:cd"), "YWI6Y2Q=");
}
