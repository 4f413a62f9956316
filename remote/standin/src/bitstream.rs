//! The output's bytes: SHA-256 in counter mode over the input's digest and the index, a
//! fixed recipe so an independent implementation (`sha256sum` in a shell) gives the same
//! file. Block `j` (32 bytes) is SHA-256(hex(SHA-256(input)) ":" index ":" j).

use sha2::{Digest, Sha256};

/// A few hundred KiB: big enough that moving it through the CAS is real work.
pub const DEFAULT_KIB: usize = 256;

pub fn derive(input: &[u8], index: u32, kib: usize) -> Vec<u8> {
    let seed = hex(&Sha256::digest(input));
    let len = kib * 1024;
    let mut out = Vec::with_capacity(len + 32);
    let mut block = 0u64;
    while out.len() < len {
        out.extend_from_slice(&Sha256::digest(format!("{seed}:{index}:{block}")));
        block += 1;
    }
    out.truncate(len);
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::process::{Command, Stdio};

    /// coreutils' sha256sum, an implementation independent of this crate's.
    fn sha256sum(data: &[u8]) -> String {
        let mut child = Command::new("sha256sum")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("coreutils sha256sum");
        child.stdin.take().unwrap().write_all(data).unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stdout).unwrap()[..64].to_string()
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn blocks_follow_the_recipe_as_sha256sum_computes_it() {
        let input = b"netlist of kernel k\n";
        let out = derive(input, 3, 1);
        assert_eq!(out.len(), 1024);
        let seed = sha256sum(input);
        for j in [0usize, 1, 31] {
            let want = unhex(&sha256sum(format!("{seed}:3:{j}").as_bytes()));
            assert_eq!(&out[j * 32..j * 32 + 32], &want[..], "block {j}");
        }
    }

    #[test]
    fn index_and_input_change_every_block() {
        let a = derive(b"x", 0, 1);
        let b = derive(b"x", 1, 1);
        let c = derive(b"y", 0, 1);
        for j in 0..32 {
            let r = j * 32..j * 32 + 32;
            assert_ne!(a[r.clone()], b[r.clone()]);
            assert_ne!(a[r.clone()], c[r]);
        }
    }
}
