//! `Label` (a configured providers label, `ctx.label`), `TargetLabel` (`.raw_target()`) and
//! the cell path `.path` returns.

use allocative::Allocative;
use derive_more::Display;
use starlark::any::ProvidesStaticType;
use starlark::environment::{Methods, MethodsBuilder};
use starlark::starlark_module;
use starlark::starlark_simple_value;
use starlark::values::none::NoneOr;
use starlark::values::{
    starlark_value, Heap, NoSerialize, StarlarkValue, StringValue, Value, ValueLike,
};
use starlark_map::StarlarkHasher;
use std::hash::Hash;

use crate::model::{ProvidersLabel, TargetLabel};

/// The configuration a target is analysed in, as buck2 prints it after the label.
pub const UNSPECIFIED_CFG: &str = "<unspecified>";
/// buck2's output hash of the unspecified configuration.
pub const UNSPECIFIED_CFG_HASH: &str = "1ef78538d8598cb2";

/// `root//pkg:name[sub] (<unspecified>)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConfiguredLabel {
    pub label: ProvidersLabel,
    pub cfg: String,
}

impl ConfiguredLabel {
    pub fn unspecified(target: TargetLabel) -> ConfiguredLabel {
        ConfiguredLabel {
            label: ProvidersLabel {
                target,
                sub_target: Vec::new(),
            },
            cfg: UNSPECIFIED_CFG.to_owned(),
        }
    }
}

impl std::fmt::Display for ConfiguredLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.label, self.cfg)
    }
}

fn cell_path(t: &TargetLabel) -> String {
    format!("{}//{}", t.cell, t.package)
}

/// `ctx.label`, `dep.label`, an `attrs.label()` value.
#[derive(Debug, Display, ProvidesStaticType, NoSerialize, Allocative, Clone)]
#[display("{}", _0)]
pub struct StarlarkLabel(#[allocative(skip)] pub ConfiguredLabel);

starlark_simple_value!(StarlarkLabel);

#[starlark_value(type = "Label")]
impl<'v> StarlarkValue<'v> for StarlarkLabel {
    fn get_methods() -> Option<&'static Methods> {
        Some(LABEL_METHODS.methods())
    }

    fn equals(&self, other: Value<'v>) -> starlark::Result<bool> {
        Ok(StarlarkLabel::from_value(other).is_some_and(|o| o.0 == self.0))
    }

    fn write_hash(&self, hasher: &mut StarlarkHasher) -> starlark::Result<()> {
        self.0.hash(hasher);
        Ok(())
    }
}

#[starlark_module]
fn label_methods(builder: &mut MethodsBuilder) {
    #[starlark(attribute)]
    fn name<'v>(this: &StarlarkLabel, heap: Heap<'v>) -> starlark::Result<StringValue<'v>> {
        Ok(heap.alloc_str(&this.0.label.target.name))
    }
    #[starlark(attribute)]
    fn package<'v>(this: &StarlarkLabel, heap: Heap<'v>) -> starlark::Result<StringValue<'v>> {
        Ok(heap.alloc_str(&this.0.label.target.package))
    }
    #[starlark(attribute)]
    fn cell<'v>(this: &StarlarkLabel, heap: Heap<'v>) -> starlark::Result<StringValue<'v>> {
        Ok(heap.alloc_str(&this.0.label.target.cell))
    }
    #[starlark(attribute)]
    fn path(this: &StarlarkLabel) -> starlark::Result<CellPath> {
        Ok(CellPath(cell_path(&this.0.label.target)))
    }
    #[starlark(attribute)]
    fn sub_target<'v>(this: &StarlarkLabel, heap: Heap<'v>) -> starlark::Result<NoneOr<Value<'v>>> {
        if this.0.label.sub_target.is_empty() {
            Ok(NoneOr::None)
        } else {
            Ok(NoneOr::Other(heap.alloc(this.0.label.sub_target.clone())))
        }
    }
    fn raw_target(this: &StarlarkLabel) -> starlark::Result<StarlarkTargetLabel> {
        Ok(StarlarkTargetLabel(this.0.label.target.clone()))
    }
    fn configured_target(this: &StarlarkLabel) -> starlark::Result<StarlarkLabel> {
        let mut l = this.0.clone();
        l.label.sub_target.clear();
        Ok(StarlarkLabel(l))
    }
}

/// `root//pkg:name` without configuration (`ctx.label.raw_target()`).
#[derive(Debug, Display, ProvidesStaticType, NoSerialize, Allocative, Clone)]
#[display("{}", _0)]
pub struct StarlarkTargetLabel(#[allocative(skip)] pub TargetLabel);

starlark_simple_value!(StarlarkTargetLabel);

#[starlark_value(type = "TargetLabel")]
impl<'v> StarlarkValue<'v> for StarlarkTargetLabel {
    fn get_methods() -> Option<&'static Methods> {
        Some(TARGET_LABEL_METHODS.methods())
    }

    fn equals(&self, other: Value<'v>) -> starlark::Result<bool> {
        Ok(StarlarkTargetLabel::from_value(other).is_some_and(|o| o.0 == self.0))
    }

    fn write_hash(&self, hasher: &mut StarlarkHasher) -> starlark::Result<()> {
        self.0.hash(hasher);
        Ok(())
    }
}

#[starlark_module]
fn target_label_methods(builder: &mut MethodsBuilder) {
    #[starlark(attribute)]
    fn name<'v>(this: &StarlarkTargetLabel, heap: Heap<'v>) -> starlark::Result<StringValue<'v>> {
        Ok(heap.alloc_str(&this.0.name))
    }
    #[starlark(attribute)]
    fn package<'v>(
        this: &StarlarkTargetLabel,
        heap: Heap<'v>,
    ) -> starlark::Result<StringValue<'v>> {
        Ok(heap.alloc_str(&this.0.package))
    }
    #[starlark(attribute)]
    fn cell<'v>(this: &StarlarkTargetLabel, heap: Heap<'v>) -> starlark::Result<StringValue<'v>> {
        Ok(heap.alloc_str(&this.0.cell))
    }
    #[starlark(attribute)]
    fn path(this: &StarlarkTargetLabel) -> starlark::Result<CellPath> {
        Ok(CellPath(cell_path(&this.0)))
    }
}

/// `root//a/b` (what `label.path` returns).
#[derive(Debug, Display, ProvidesStaticType, NoSerialize, Allocative, Clone)]
#[display("{}", _0)]
pub struct CellPath(pub String);

starlark_simple_value!(CellPath);

#[starlark_value(type = "CellPath")]
impl<'v> StarlarkValue<'v> for CellPath {
    fn equals(&self, other: Value<'v>) -> starlark::Result<bool> {
        Ok(other
            .downcast_ref::<CellPath>()
            .is_some_and(|o| o.0 == self.0))
    }
}

starlark::methods_static!(LABEL_METHODS = label_methods);

starlark::methods_static!(TARGET_LABEL_METHODS = target_label_methods);
