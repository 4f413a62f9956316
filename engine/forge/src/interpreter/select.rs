//! `select({...})` values: opaque to BUCK code, turned into `CoercedAttr::Select` (and
//! `CoercedAttr::Concat` for `list + select(...)`) when an attribute is coerced.

use allocative::Allocative;
use starlark::starlark_complex_value;
use starlark::values::{
    starlark_value, Coerce, Freeze, Heap, NoSerialize, ProvidesStaticType, StarlarkValue, Trace,
    Value, ValueLike,
};

#[derive(Debug, Trace, Coerce, Freeze, ProvidesStaticType, NoSerialize, Allocative)]
#[repr(C)]
pub struct SelectGen<V: starlark::values::ValueLifetimeless> {
    /// Branch keys (`"//config:x"` or `"DEFAULT"`), in declaration order.
    pub keys: Vec<String>,
    pub values: Vec<V>,
    /// Non-empty for a concatenation: the parts, each a plain value or a select.
    pub parts: Vec<V>,
}

starlark_complex_value!(pub Select);

impl<V: starlark::values::ValueLifetimeless> std::fmt::Display for SelectGen<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.parts.is_empty() {
            write!(f, "select({{{}}})", self.keys.join(", "))
        } else {
            write!(f, "select(<concatenation of {} parts>)", self.parts.len())
        }
    }
}

impl<'v> Select<'v> {
    fn concat(lhs: Value<'v>, rhs: Value<'v>, heap: Heap<'v>) -> Value<'v> {
        let mut parts = Vec::new();
        for v in [lhs, rhs] {
            match Select::from_value(v) {
                Some(s) if !s.parts.is_empty() => parts.extend(s.parts.iter().copied()),
                _ => parts.push(v),
            }
        }
        heap.alloc_complex(Select {
            keys: Vec::new(),
            values: Vec::new(),
            parts,
        })
    }
}

#[starlark_value(type = "Select")]
impl<'v, V: ValueLike<'v>> StarlarkValue<'v> for SelectGen<V>
where
    Self: ProvidesStaticType<'v>,
{
    fn add(&self, rhs: Value<'v>, heap: Heap<'v>) -> Option<starlark::Result<Value<'v>>> {
        let me = heap.alloc_complex(Select {
            keys: self.keys.clone(),
            values: self.values.iter().map(|v| v.to_value()).collect(),
            parts: self.parts.iter().map(|v| v.to_value()).collect(),
        });
        Some(Ok(Select::concat(me, rhs, heap)))
    }

    fn radd(&self, lhs: Value<'v>, heap: Heap<'v>) -> Option<starlark::Result<Value<'v>>> {
        let me = heap.alloc_complex(Select {
            keys: self.keys.clone(),
            values: self.values.iter().map(|v| v.to_value()).collect(),
            parts: self.parts.iter().map(|v| v.to_value()).collect(),
        });
        Some(Ok(Select::concat(lhs, me, heap)))
    }
}

/// What a Starlark value holds, seen from coercion.
pub enum SelectView<'v> {
    Branches(Vec<(String, Value<'v>)>),
    Concat(Vec<Value<'v>>),
}

pub fn view<'v>(v: Value<'v>) -> Option<SelectView<'v>> {
    let s = Select::from_value(v)?;
    Some(if s.parts.is_empty() {
        SelectView::Branches(
            s.keys
                .iter()
                .cloned()
                .zip(s.values.iter().map(|v| v.to_value()))
                .collect(),
        )
    } else {
        SelectView::Concat(s.parts.iter().map(|v| v.to_value()).collect())
    })
}
