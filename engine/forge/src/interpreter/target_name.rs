//! buck2's rule for target names (upstream `buck2_core::target::name`, as buck2 at commit
//! 0676d75903 reports it): non-empty, ASCII letters and digits and the symbols
//! `, . = - / ~ @ ! + $ _` only. A space, a newline or a non-ASCII letter would otherwise
//! reach output paths and split the line-oriented output of `forge targets`.

/// The symbols buck2 allows in a target name besides ASCII letters and digits.
const SYMBOLS: &str = ",.=-/~@!+$_";

pub fn is_valid(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || SYMBOLS.contains(c))
}

/// buck2's error text, word for word.
pub fn invalid_message(name: &str) -> String {
    format!(
        "Invalid target name `{name}`. Target names are non-empty strings and can only contain alpha numeric characters, and symbols `,`, `.`, `=`, `-`, `/`, `~`, `@`, `!`, `+`, `$`, and `_`. No other characters are allowed."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buck2_character_rule() {
        for ok in ["a", "A9", "ok,.=-/~@!+$_Z9", "lib.so"] {
            assert!(is_valid(ok), "{ok}");
        }
        for bad in ["", "a b", "a\nb", "café", "a:b", "a[b]", "a\tb", "a*"] {
            assert!(!is_valid(bad), "{bad:?}");
        }
    }
}
