//! `ctx` (AnalysisContext) and `Dependency`, the value a dep attribute gives.

use allocative::Allocative;
use derive_more::Display;
use starlark::any::ProvidesStaticType;
use starlark::environment::{Methods, MethodsBuilder};
use starlark::starlark_module;
use starlark::starlark_simple_value;
use starlark::values::list::AllocList;
use starlark::values::{
    starlark_value, FrozenValue, Heap, NoSerialize, StarlarkValue, Trace, Value, ValueLike,
};

use super::label::{ConfiguredLabel, StarlarkLabel};
use super::providers::FrozenProviderCollection;

/// `ctx`: the argument of a rule implementation.
#[derive(Debug, Display, Trace, ProvidesStaticType, NoSerialize, Allocative)]
#[display("<ctx>")]
pub struct AnalysisContext<'v> {
    pub attrs: Value<'v>,
    pub actions: Value<'v>,
    pub label: Value<'v>,
}

#[starlark_value(type = "AnalysisContext")]
impl<'v> StarlarkValue<'v> for AnalysisContext<'v> {
    fn get_attr(&self, attribute: &str, _heap: Heap<'v>) -> Option<Value<'v>> {
        match attribute {
            "attrs" => Some(self.attrs),
            "actions" => Some(self.actions),
            "label" => Some(self.label),
            "plugins" => Some(Value::new_none()),
            _ => None,
        }
    }

    fn dir_attr(&self) -> Vec<String> {
        ["actions", "attrs", "label", "plugins"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    }
}

/// A resolved dependency: its label and the (frozen) providers of its analysis.
#[derive(Debug, Display, ProvidesStaticType, NoSerialize, Allocative)]
#[display("<dependency {}>", label)]
pub struct Dependency {
    #[allocative(skip)]
    pub label: ConfiguredLabel,
    /// A `ProviderCollection` in a heap the analysing module keeps alive.
    #[allocative(skip)]
    pub providers: FrozenValue,
}

starlark_simple_value!(Dependency);

impl Dependency {
    pub fn collection(&self) -> &FrozenProviderCollection {
        self.providers
            .to_value()
            .downcast_ref::<FrozenProviderCollection>()
            .expect("Dependency holds a frozen provider collection")
    }
}

#[starlark_value(type = "Dependency")]
impl<'v> StarlarkValue<'v> for Dependency {
    fn at(&self, index: Value<'v>, _heap: Heap<'v>) -> starlark::Result<Value<'v>> {
        self.collection()
            .index(index)
            .map_err(starlark::Error::new_other)
    }

    fn is_in(&self, other: Value<'v>) -> starlark::Result<bool> {
        Ok(self
            .collection()
            .get_opt(other)
            .map_err(starlark::Error::new_other)?
            .is_some())
    }

    fn get_methods() -> Option<&'static Methods> {
        Some(DEPENDENCY_METHODS.methods())
    }
}

#[starlark_module]
fn dependency_methods(builder: &mut MethodsBuilder) {
    fn get<'v>(this: &Dependency, index: Value<'v>) -> anyhow::Result<Value<'v>> {
        Ok(this
            .collection()
            .get_opt(index)?
            .unwrap_or_else(Value::new_none))
    }

    #[starlark(attribute)]
    fn label(this: &Dependency) -> starlark::Result<StarlarkLabel> {
        Ok(StarlarkLabel(this.label.clone()))
    }

    #[starlark(attribute)]
    fn providers<'v>(this: &Dependency, heap: Heap<'v>) -> starlark::Result<Value<'v>> {
        Ok(heap.alloc(AllocList(
            this.collection().providers.iter().map(|p| p.to_value()),
        )))
    }
}

starlark::methods_static!(DEPENDENCY_METHODS = dependency_methods);
