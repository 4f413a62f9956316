//! FINN's integer DataTypes (qonnx `DataType`), as far as the executor needs them:
//! the value range, to check inputs and to bound accumulators.

use anyhow::{bail, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataType {
    /// BINARY is `Int { bits: 1, signed: false }`.
    Int {
        bits: u32,
        signed: bool,
    },
    Bipolar,
    Ternary,
    /// Any non-integer FINN type (FLOAT32, FIXED<..>, ...): not executed.
    NonInteger,
}

impl DataType {
    pub fn parse(name: &str) -> Result<DataType> {
        let int = |digits: &str, signed: bool| -> Result<DataType> {
            match digits.parse::<u32>() {
                Ok(bits) if (1..=62).contains(&bits) => Ok(DataType::Int { bits, signed }),
                _ => bail!("unsupported FINN datatype {name}"),
            }
        };
        match name {
            "BINARY" => Ok(DataType::Int {
                bits: 1,
                signed: false,
            }),
            "BIPOLAR" => Ok(DataType::Bipolar),
            "TERNARY" => Ok(DataType::Ternary),
            _ if name.starts_with("UINT") => int(&name[4..], false),
            _ if name.starts_with("INT") => int(&name[3..], true),
            _ => Ok(DataType::NonInteger),
        }
    }

    pub fn is_integer(self) -> bool {
        self != DataType::NonInteger
    }

    pub fn is_bipolar(self) -> bool {
        self == DataType::Bipolar
    }

    /// Smallest and largest value; None for non-integer types.
    pub fn range(self) -> Option<(i64, i64)> {
        match self {
            DataType::Int {
                bits,
                signed: false,
            } => Some((0, (1i64 << bits) - 1)),
            DataType::Int { bits, signed: true } => {
                Some((-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1))
            }
            DataType::Bipolar | DataType::Ternary => Some((-1, 1)),
            DataType::NonInteger => None,
        }
    }

    /// qonnx `DataType.bitwidth()`.
    pub fn bitwidth(self) -> Option<u32> {
        match self {
            DataType::Int { bits, .. } => Some(bits),
            DataType::Bipolar => Some(1),
            DataType::Ternary => Some(2),
            DataType::NonInteger => None,
        }
    }

    /// Largest magnitude a value can have.
    pub fn max_abs(self) -> Option<i64> {
        self.range().map(|(lo, hi)| lo.abs().max(hi.abs()))
    }

    pub fn allows(self, v: i64) -> bool {
        match self {
            DataType::Bipolar => v == -1 || v == 1,
            _ => self.range().is_some_and(|(lo, hi)| (lo..=hi).contains(&v)),
        }
    }
}

/// FINN's name of the type (`UINT4`, `INT11`, `BIPOLAR`, ...).
impl std::fmt::Display for DataType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataType::Int {
                bits: 1,
                signed: false,
            } => write!(f, "BINARY"),
            DataType::Int {
                bits,
                signed: false,
            } => write!(f, "UINT{bits}"),
            DataType::Int { bits, signed: true } => write!(f, "INT{bits}"),
            DataType::Bipolar => write!(f, "BIPOLAR"),
            DataType::Ternary => write!(f, "TERNARY"),
            DataType::NonInteger => write!(f, "a non-integer type"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_follow_qonnx() {
        assert_eq!(DataType::parse("UINT4").unwrap().range(), Some((0, 15)));
        assert_eq!(DataType::parse("INT4").unwrap().range(), Some((-8, 7)));
        assert_eq!(DataType::parse("BINARY").unwrap().range(), Some((0, 1)));
        assert!(!DataType::parse("BIPOLAR").unwrap().allows(0));
        assert!(!DataType::parse("FLOAT32").unwrap().is_integer());
        assert!(DataType::parse("INT99").is_err());
        assert_eq!(DataType::parse("INT11").unwrap().to_string(), "INT11");
    }
}
