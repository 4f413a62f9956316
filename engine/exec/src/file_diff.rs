//! The difference between two versions of one file, for `forge log diff`: a unified line
//! diff of text (one hunk around the changed lines), and for binary files the first
//! differing offset with a hex dump of both sides there.

use std::fmt::Write as _;

/// Lines of context around a change.
const CONTEXT: usize = 3;
/// The changed region is diffed line by line up to this many lines a side; beyond that both
/// sides of the region are shown as removed and added (still exact, only less minimal).
const MAX_LCS_LINES: usize = 2000;
/// Lines of diff printed at most.
const MAX_PRINTED: usize = 80;

pub fn render(path: &str, a: &[u8], b: &[u8]) -> String {
    match (std::str::from_utf8(a), std::str::from_utf8(b)) {
        (Ok(x), Ok(y)) if !x.contains('\0') && !y.contains('\0') => text(path, x, y),
        _ => binary(a, b),
    }
}

enum Op<'a> {
    Same(&'a str),
    Del(&'a str),
    Add(&'a str),
}

/// The edit script of the middle region by longest common subsequence.
fn lcs<'a>(x: &[&'a str], y: &[&'a str]) -> Vec<Op<'a>> {
    if x.len() > MAX_LCS_LINES || y.len() > MAX_LCS_LINES {
        return x
            .iter()
            .map(|l| Op::Del(l))
            .chain(y.iter().map(|l| Op::Add(l)))
            .collect();
    }
    let (n, m) = (x.len(), y.len());
    let mut t = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i][j] = if x[i] == y[j] {
                t[i + 1][j + 1] + 1
            } else {
                t[i + 1][j].max(t[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut ops) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && x[i] == y[j] {
            ops.push(Op::Same(x[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || t[i + 1][j] >= t[i][j + 1]) {
            // deletions before additions, as diff(1) prints them
            ops.push(Op::Del(x[i]));
            i += 1;
        } else {
            ops.push(Op::Add(y[j]));
            j += 1;
        }
    }
    ops
}

fn text(path: &str, a: &str, b: &str) -> String {
    let (x, y): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let pre = x.iter().zip(&y).take_while(|(p, q)| p == q).count();
    let suf = x[pre..]
        .iter()
        .rev()
        .zip(y[pre..].iter().rev())
        .take_while(|(p, q)| p == q)
        .count();
    if pre == x.len() && pre == y.len() {
        // same lines: only the line ends or the final newline differ
        return format!(
            "    the files differ only in line endings or the final newline ({} vs {} bytes)\n",
            a.len(),
            b.len()
        );
    }
    let start = pre.saturating_sub(CONTEXT);
    let (end_x, end_y) = (x.len() - suf, y.len() - suf);
    let tail = suf.min(CONTEXT);
    let mut out = format!("--- a/{path}\n+++ b/{path}\n");
    let _ = writeln!(
        out,
        "@@ -{},{} +{},{} @@",
        start + 1,
        end_x + tail - start,
        start + 1,
        end_y + tail - start
    );
    let mut lines: Vec<String> = x[start..pre].iter().map(|l| format!(" {l}")).collect();
    for op in lcs(&x[pre..end_x], &y[pre..end_y]) {
        lines.push(match op {
            Op::Same(l) => format!(" {l}"),
            Op::Del(l) => format!("-{l}"),
            Op::Add(l) => format!("+{l}"),
        });
    }
    lines.extend(x[end_x..end_x + tail].iter().map(|l| format!(" {l}")));
    let total = lines.len();
    for l in lines.into_iter().take(MAX_PRINTED) {
        out.push_str(&l);
        out.push('\n');
    }
    if total > MAX_PRINTED {
        let _ = writeln!(out, "... ({} more diff lines)", total - MAX_PRINTED);
    }
    out
}

fn hex_row(bytes: &[u8], at: usize) -> String {
    let row: Vec<String> = bytes
        .iter()
        .skip(at)
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    let ascii: String = bytes
        .iter()
        .skip(at)
        .take(16)
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        })
        .collect();
    format!("{at:08x}  {:<47}  |{ascii}|", row.join(" "))
}

fn binary(a: &[u8], b: &[u8]) -> String {
    let first = a
        .iter()
        .zip(b)
        .position(|(p, q)| p != q)
        .unwrap_or(a.len().min(b.len()));
    let mut out = format!(
        "    binary files differ: {} vs {} bytes, first difference at byte {first} (0x{first:x})\n",
        a.len(),
        b.len()
    );
    let row = first / 16 * 16;
    let rows: Vec<usize> = (row.saturating_sub(16)..=row + 16).step_by(16).collect();
    for (side, bytes) in [("a", a), ("b", b)] {
        for &r in rows.iter().filter(|&&r| r < bytes.len()) {
            let _ = writeln!(out, "    {side} {}", hex_row(bytes, r));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn a_changed_line_is_one_hunk_with_context() {
        let a = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let b = "1\n2\n3\n4\nfive\n6\n7\n8\n";
        let d = render("f.txt", a.as_bytes(), b.as_bytes());
        assert_eq!(
            d,
            "--- a/f.txt\n+++ b/f.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn reordered_lines_are_a_minimal_edit() {
        let d = render("f", b"x\na\nb\ny\n", b"x\nb\na\ny\n");
        assert!(d.contains(" x\n-a\n b\n+a\n y\n"), "{d}");
    }

    #[test]
    fn binary_files_show_the_first_differing_offset() {
        let mut a = vec![0u8; 40];
        let mut b = a.clone();
        b[20] = 0xff;
        a[0] = 1;
        b[0] = 1;
        let d = render("p.onnx", &a, &b);
        assert!(d.contains("first difference at byte 20 (0x14)"), "{d}");
        assert!(d.contains("b 00000010  00 00 00 00 ff"), "{d}");
    }
}
