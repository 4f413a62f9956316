//! Providers: what every provider shares (identity, fields, errors), instances and the
//! collections of a target. The rest is split by job:
//! - [`user`]: `provider()` / `provider_field()` and the callables,
//! - [`builtin`]: `DefaultInfo`, `RunInfo`, `ExternalRunnerTestInfo`, the configuration and
//!   execution platform providers,
//! - [`conversions`]: instance fields to what analysis consumes (`DefaultInfo`, `RunInfo`).

mod builtin;
mod conversions;
mod user;

pub use self::builtin::*;
pub use self::conversions::*;
pub use self::user::*;

use std::fmt;
use std::sync::Arc;

use allocative::Allocative;
use starlark::any::ProvidesStaticType;
use starlark::coerce::Coerce;
use starlark::starlark_complex_value;
use starlark::starlark_module;
use starlark::typing::{Ty, TyStarlarkValue, TyUser, TyUserFields, TyUserParams};
use starlark::values::typing::TypeInstanceId;
use starlark::values::{
    starlark_value, Freeze, Heap, NoSerialize, StarlarkValue, Trace, Value, ValueLike,
};

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("Found `{0}` extra named parameter(s) for call to {1}")]
    UnknownField(String, String),
    #[error("Missing named-only parameter `{0}` for call to `{1}`")]
    MissingField(String, String),
    #[error("{0}() does not accept positional arguments")]
    Positional(String),
    #[error("{0}() accepts at most {1} positional argument(s)")]
    TooManyPositional(String, usize),
    #[error("Provider field `{0}` is declared more than once")]
    DuplicateField(String),
    #[error("`provider(fields = ...)` must be a list of field names or a dict of name to type or `provider_field`")]
    BadFields,
    #[error("Provider must be assigned to a variable before it is called, e.g. `FooInfo = provider(fields = [...])`")]
    NotExported,
    #[error("Cannot specify both `default_output` and `default_outputs` in `DefaultInfo`")]
    BothDefaultOutputs,
    #[error("`{field}` of {provider} must be {expected}, got `{got}`")]
    BadType {
        provider: String,
        field: String,
        expected: String,
        got: String,
    },
    #[error("Value `{value}` of type `{value_type}` does not match the type annotation `{ty}` for field `{field}` of `{provider}`")]
    FieldType {
        value: String,
        value_type: String,
        ty: String,
        field: String,
        provider: String,
    },
    #[error("Provider `{0}` was not found in the collection. Found these providers: {1}")]
    NotFound(String, String),
    #[error("Expected a provider (e.g. `DefaultInfo`) as index, got `{0}`")]
    NotAProvider(String),
}

/// Which builtin provider a callable is (they validate or convert some fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    DefaultInfo,
    RunInfo,
    ExternalRunnerTestInfo,
    Plain,
}

/// Identity and field names of a provider.
#[derive(Debug)]
pub struct ProviderMeta {
    pub uid: u64,
    pub name: String,
    pub fields: Vec<String>,
    /// Fields that must be given (dict-form fields without default).
    pub required: Vec<bool>,
    /// Positional parameters accepted (builtins only).
    pub positional: usize,
    pub builtin: Option<Builtin>,
    pub ty: Ty,
}

impl ProviderMeta {
    fn new(
        uid: u64,
        name: &str,
        fields: Vec<String>,
        required: Vec<bool>,
        positional: usize,
        builtin: Option<Builtin>,
    ) -> anyhow::Result<Arc<ProviderMeta>> {
        let ty = Ty::custom(
            TyUser::new(
                name.to_owned(),
                TyStarlarkValue::new::<FrozenProviderInstance>(),
                TypeInstanceId::r#gen(),
                TyUserParams {
                    fields: TyUserFields {
                        known: fields.iter().map(|f| (f.clone(), Ty::any())).collect(),
                        unknown: false,
                    },
                    ..TyUserParams::default()
                },
            )
            .map_err(starlark::Error::into_anyhow)?,
        );
        Ok(Arc::new(ProviderMeta {
            uid,
            name: name.to_owned(),
            fields,
            required,
            positional,
            builtin,
            ty,
        }))
    }

    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f == name)
    }
}

// ---------------------------------------------------------------------------------------
// Instances

#[derive(Debug, Trace, Freeze, ProvidesStaticType, NoSerialize, Allocative, Coerce)]
#[repr(C)]
pub struct ProviderInstanceGen<V> {
    #[freeze(identity)]
    #[allocative(skip)]
    #[trace(static)]
    pub meta: Arc<ProviderMeta>,
    pub values: Vec<V>,
}

starlark_complex_value!(pub ProviderInstance);

impl<'v, V: ValueLike<'v>> fmt::Display for ProviderInstanceGen<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.meta.name)?;
        for (i, (k, v)) in self.meta.fields.iter().zip(&self.values).enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{}={}", k, v.to_value().to_repr())?;
        }
        write!(f, ")")
    }
}

impl<'v, V: ValueLike<'v>> ProviderInstanceGen<V> {
    pub fn get(&self, field: &str) -> Option<Value<'v>> {
        self.meta
            .field_index(field)
            .map(|i| self.values[i].to_value())
    }
}

#[starlark_value(type = "provider")]
impl<'v, V: ValueLike<'v>> StarlarkValue<'v> for ProviderInstanceGen<V>
where
    Self: ProvidesStaticType<'v>,
{
    fn get_attr(&self, attribute: &str, _heap: Heap<'v>) -> Option<Value<'v>> {
        self.get(attribute)
    }

    fn dir_attr(&self) -> Vec<String> {
        self.meta.fields.clone()
    }

    fn has_attr(&self, attribute: &str, _heap: Heap<'v>) -> bool {
        self.meta.field_index(attribute).is_some()
    }

    fn collect_repr(&self, collector: &mut String) {
        collector.push_str(&self.to_string());
    }

    fn equals(&self, other: Value<'v>) -> starlark::Result<bool> {
        let Some(o) = ProviderInstance::from_value(other) else {
            return Ok(false);
        };
        if o.meta.uid != self.meta.uid {
            return Ok(false);
        }
        for (a, b) in self.values.iter().zip(&o.values) {
            if !a.to_value().equals(*b)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

// ---------------------------------------------------------------------------------------
// Collections

/// The providers of one target (or sub-target): `dep[Info]`, `dep.get(Info)`.
#[derive(Debug, Trace, Freeze, ProvidesStaticType, NoSerialize, Allocative, Coerce)]
#[repr(C)]
pub struct ProviderCollectionGen<V> {
    pub providers: Vec<V>,
}

starlark_complex_value!(pub ProviderCollection);

impl<'v, V: ValueLike<'v>> fmt::Display for ProviderCollectionGen<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Providers[{}]", self.names().join(", "))
    }
}

impl<'v> ProviderCollection<'v> {
    /// A sub-target collection: providers as given (a missing `DefaultInfo` means no outputs).
    pub fn from_providers(list: Vec<Value<'v>>) -> anyhow::Result<ProviderCollection<'v>> {
        for p in &list {
            if ProviderInstance::from_value(*p).is_none() {
                return Err(ProviderError::BadType {
                    provider: "DefaultInfo".to_owned(),
                    field: "sub_targets".to_owned(),
                    expected: "a dict of provider lists".to_owned(),
                    got: p.to_repr(),
                }
                .into());
            }
        }
        Ok(ProviderCollection { providers: list })
    }
}

impl<'v, V: ValueLike<'v>> ProviderCollectionGen<V> {
    pub fn names(&self) -> Vec<String> {
        self.providers
            .iter()
            .filter_map(|p| ProviderInstance::from_value(p.to_value()).map(|p| p.meta.name.clone()))
            .collect()
    }

    pub fn find(&self, uid: u64) -> Option<Value<'v>> {
        self.providers
            .iter()
            .map(|p| p.to_value())
            .find(|p| ProviderInstance::from_value(*p).is_some_and(|p| p.meta.uid == uid))
    }

    pub fn find_builtin(&self, b: Builtin) -> Option<Value<'v>> {
        self.providers
            .iter()
            .map(|p| p.to_value())
            .find(|p| ProviderInstance::from_value(*p).is_some_and(|p| p.meta.builtin == Some(b)))
    }

    pub fn index(&self, index: Value<'v>) -> anyhow::Result<Value<'v>> {
        let (uid, name) =
            provider_identity(index).ok_or_else(|| ProviderError::NotAProvider(index.to_repr()))?;
        self.find(uid)
            .ok_or_else(|| ProviderError::NotFound(name, self.names().join(", ")).into())
    }

    pub fn get_opt(&self, index: Value<'v>) -> anyhow::Result<Option<Value<'v>>> {
        let (uid, _) =
            provider_identity(index).ok_or_else(|| ProviderError::NotAProvider(index.to_repr()))?;
        Ok(self.find(uid))
    }
}

#[starlark_value(type = "ProviderCollection")]
impl<'v, V: ValueLike<'v>> StarlarkValue<'v> for ProviderCollectionGen<V>
where
    Self: ProvidesStaticType<'v>,
{
    fn at(&self, index: Value<'v>, _heap: Heap<'v>) -> starlark::Result<Value<'v>> {
        self.index(index).map_err(starlark::Error::new_other)
    }

    fn is_in(&self, other: Value<'v>) -> starlark::Result<bool> {
        Ok(self
            .get_opt(other)
            .map_err(starlark::Error::new_other)?
            .is_some())
    }

    fn get_methods() -> Option<&'static starlark::environment::Methods> {
        Some(COLLECTION_METHODS.methods())
    }
}

#[starlark_module]
fn collection_methods(builder: &mut starlark::environment::MethodsBuilder) {
    fn get<'v>(this: Value<'v>, index: Value<'v>) -> anyhow::Result<Value<'v>> {
        let c = ProviderCollection::from_value(this).expect("receiver is a collection");
        Ok(c.get_opt(index)?.unwrap_or_else(Value::new_none))
    }
}

starlark::methods_static!(COLLECTION_METHODS = collection_methods);
