//! User providers: `provider()`, `provider_field()`, the callables they return (frozen or
//! not) and making an instance from a call (shared with the builtin providers).

use std::cell::OnceCell;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use allocative::Allocative;
use starlark::any::ProvidesStaticType;
use starlark::coerce::Coerce;
use starlark::environment::GlobalsBuilder;
use starlark::eval::{Arguments, Evaluator};
use starlark::starlark_complex_value;
use starlark::starlark_module;
use starlark::typing::Ty;
use starlark::values::dict::DictRef;
use starlark::values::list::ListRef;
use starlark::values::typing::TypeCompiled;
use starlark::values::{
    starlark_value, AllocFrozenValue, Freeze, FreezeResult, Freezer, FrozenHeap, FrozenValue, Heap,
    NoSerialize, StarlarkValue, Trace, Value, ValueLike,
};

use crate::analysis::cmd_args::{value_to_args, CmdArgsData, StarlarkCmdArgs};

use super::*;

static NEXT_UID: AtomicU64 = AtomicU64::new(1000);

// ---------------------------------------------------------------------------------------
// provider_field

#[derive(Debug, Trace, Freeze, ProvidesStaticType, NoSerialize, Allocative, Coerce)]
#[repr(C)]
pub struct ProviderFieldGen<V> {
    pub ty: V,
    /// Empty when the field has no default (it must then be given).
    pub default: Vec<V>,
}

starlark_complex_value!(pub ProviderField);

impl<V: fmt::Display> fmt::Display for ProviderFieldGen<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "provider_field({})", self.ty)
    }
}

#[starlark_value(type = "ProviderField")]
impl<'v, V: ValueLike<'v>> StarlarkValue<'v> for ProviderFieldGen<V> where
    Self: ProvidesStaticType<'v>
{
}

// ---------------------------------------------------------------------------------------
// provider() callables

/// What `provider(...)` returns before its module is frozen; named by `export_as`.
#[derive(Debug, Trace, ProvidesStaticType, NoSerialize, Allocative)]
pub struct ProviderCallable<'v> {
    pub(crate) uid: u64,
    pub(crate) fields: Vec<String>,
    pub(crate) required: Vec<bool>,
    pub(crate) defaults: Vec<Option<Value<'v>>>,
    /// The declared type of each field (dict form), checked when an instance is made.
    pub(crate) types: Vec<Option<Value<'v>>>,
    #[allocative(skip)]
    #[trace(static)]
    pub(crate) meta: OnceCell<Arc<ProviderMeta>>,
    /// `provider(doc = ...)`, for `forge docs`.
    #[trace(static)]
    pub(crate) doc: String,
}

impl fmt::Display for ProviderCallable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.meta.get() {
            Some(m) => write!(f, "{}", m.name),
            None => write!(f, "<provider>"),
        }
    }
}

impl<'v> Freeze for ProviderCallable<'v> {
    type Frozen = FrozenProviderCallable;
    fn freeze(self, freezer: &Freezer) -> FreezeResult<FrozenProviderCallable> {
        let meta = match self.meta.into_inner() {
            Some(m) => m,
            None => ProviderMeta::new(
                self.uid,
                "<unexported provider>",
                self.fields,
                self.required,
                0,
                None,
            )
            .map_err(|e| starlark::values::FreezeError::new(e.to_string()))?,
        };
        let mut defaults = Vec::new();
        for d in self.defaults {
            defaults.push(match d {
                Some(v) => Some(v.freeze(freezer)?),
                None => None,
            });
        }
        let mut types = Vec::new();
        for t in self.types {
            types.push(match t {
                Some(v) => Some(v.freeze(freezer)?),
                None => None,
            });
        }
        Ok(FrozenProviderCallable {
            instance_meta: meta.clone(),
            meta,
            defaults,
            types,
            doc: self.doc,
        })
    }
}

// Deliberately the same opening as the other callables': StarlarkValue's export_as signature.
#[starlark_value(type = "provider_callable")]
impl<'v> StarlarkValue<'v> for ProviderCallable<'v> {
    type Canonical = FrozenProviderCallable;

    fn export_as(
        &self,
        variable_name: &str,
        _eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<()> {
        if self.meta.get().is_none() {
            let meta = ProviderMeta::new(
                self.uid,
                variable_name,
                self.fields.clone(),
                self.required.clone(),
                0,
                None,
            )
            .map_err(starlark::Error::new_other)?;
            let _ = self.meta.set(meta);
        }
        Ok(())
    }

    fn eval_type(&self) -> Option<Ty> {
        self.meta.get().map(|m| m.ty.clone())
    }

    fn invoke(
        &self,
        _me: Value<'v>,
        args: &Arguments<'v, '_>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let meta = self
            .meta
            .get()
            .ok_or_else(|| starlark::Error::new_other(ProviderError::NotExported))?;
        instantiate(meta, meta, &self.defaults, &self.types, args, eval.heap())
            .map_err(starlark::Error::new_other)
    }
}

/// A frozen provider callable: user providers after freezing, and every builtin provider.
#[derive(Debug, ProvidesStaticType, NoSerialize, Allocative)]
pub struct FrozenProviderCallable {
    #[allocative(skip)]
    pub meta: Arc<ProviderMeta>,
    /// The fields instances have (differs from the parameters for `DefaultInfo`).
    #[allocative(skip)]
    pub(crate) instance_meta: Arc<ProviderMeta>,
    pub(crate) defaults: Vec<Option<FrozenValue>>,
    pub(crate) types: Vec<Option<FrozenValue>>,
    /// `provider(doc = ...)`; empty for builtins.
    pub doc: String,
}

impl FrozenProviderCallable {
    /// The declared type of field `i` as written (`provider_field(int)` → `int`), if any.
    pub fn field_type(&self, i: usize) -> Option<String> {
        self.types.get(i)?.map(|t| t.to_value().to_repr())
    }

    /// The default of field `i` as a Starlark literal, if it has one.
    pub fn field_default(&self, i: usize) -> Option<String> {
        self.defaults.get(i)?.map(|d| d.to_value().to_repr())
    }
}

impl fmt::Display for FrozenProviderCallable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.meta.name)
    }
}

impl AllocFrozenValue for FrozenProviderCallable {
    fn alloc_frozen_value(self, heap: &FrozenHeap) -> FrozenValue {
        heap.alloc_simple(self)
    }
}

#[starlark_value(type = "provider_callable")]
impl<'v> StarlarkValue<'v> for FrozenProviderCallable {
    type Canonical = Self;

    fn eval_type(&self) -> Option<Ty> {
        Some(self.meta.ty.clone())
    }

    // Deliberately the same signature as ProviderCallable's: it is StarlarkValue::invoke's.
    fn invoke(
        &self,
        _me: Value<'v>,
        args: &Arguments<'v, '_>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let defaults: Vec<Option<Value<'v>>> = self
            .defaults
            .iter()
            .map(|d| d.map(|v| v.to_value()))
            .collect();
        let types: Vec<Option<Value<'v>>> =
            self.types.iter().map(|d| d.map(|v| v.to_value())).collect();
        instantiate(
            &self.meta,
            &self.instance_meta,
            &defaults,
            &types,
            args,
            eval.heap(),
        )
        .map_err(starlark::Error::new_other)
    }
}

/// `(uid, name)` of a provider callable value.
pub fn provider_identity(v: Value) -> Option<(u64, String)> {
    if let Some(p) = v.downcast_ref::<FrozenProviderCallable>() {
        return Some((p.meta.uid, p.meta.name.clone()));
    }
    if let Some(p) = v.downcast_ref::<ProviderCallable>() {
        let name = p.meta.get().map(|m| m.name.clone()).unwrap_or_default();
        return Some((p.uid, name));
    }
    None
}

pub(crate) fn instantiate<'v>(
    meta: &Arc<ProviderMeta>,
    instance_meta: &Arc<ProviderMeta>,
    defaults: &[Option<Value<'v>>],
    types: &[Option<Value<'v>>],
    args: &Arguments<'v, '_>,
    heap: Heap<'v>,
) -> anyhow::Result<Value<'v>> {
    let mut values: Vec<Option<Value<'v>>> = vec![None; meta.fields.len()];
    let positional: Vec<Value<'v>> = args
        .positions(heap)
        .map_err(starlark::Error::into_anyhow)?
        .collect();
    if !positional.is_empty() {
        if meta.positional == 0 {
            return Err(ProviderError::Positional(meta.name.clone()).into());
        }
        if positional.len() > meta.positional {
            return Err(
                ProviderError::TooManyPositional(meta.name.clone(), meta.positional).into(),
            );
        }
        for (i, v) in positional.into_iter().enumerate() {
            values[i] = Some(v);
        }
    }
    for (k, v) in args.names_map().map_err(starlark::Error::into_anyhow)? {
        let idx = meta
            .field_index(k.as_str())
            .ok_or_else(|| ProviderError::UnknownField(k.as_str().to_owned(), meta.name.clone()))?;
        values[idx] = Some(v);
    }
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.into_iter().enumerate() {
        if let (Some(v), Some(Some(ty))) = (v, types.get(i)) {
            let compiled = TypeCompiled::new(*ty, heap)?;
            if !compiled.matches(v) {
                return Err(ProviderError::FieldType {
                    value: v.to_repr(),
                    value_type: v.get_type().to_owned(),
                    ty: compiled.to_string(),
                    field: meta.fields[i].clone(),
                    provider: meta.name.clone(),
                }
                .into());
            }
        }
        let v = match v {
            Some(v) if !(meta.builtin.is_some() && v.is_none()) => v,
            _ => match defaults.get(i).copied().flatten() {
                Some(d) => d,
                None if meta.required.get(i).copied().unwrap_or(false) => {
                    return Err(ProviderError::MissingField(
                        meta.fields[i].clone(),
                        meta.name.clone(),
                    )
                    .into())
                }
                None => Value::new_none(),
            },
        };
        out.push(v);
    }
    match meta.builtin {
        Some(Builtin::DefaultInfo) => out = default_info_fields(out, heap)?,
        Some(Builtin::RunInfo) => {
            let args = if out[0].is_none() {
                CmdArgsData::default()
            } else {
                value_to_args(out[0])?
            };
            out[0] = heap.alloc(StarlarkCmdArgs::new(args));
        }
        _ => {}
    }
    Ok(heap.alloc(ProviderInstance {
        meta: instance_meta.clone(),
        values: out,
    }))
}

#[starlark_module]
pub(crate) fn register_provider_functions(builder: &mut GlobalsBuilder) {
    /// Declares a provider type: `FooInfo = provider(fields = ["a"])` or
    /// `provider(fields = {"a": provider_field(int, default = 0)})`.
    fn provider<'v>(
        #[starlark(require = named, default = "")] doc: &str,
        #[starlark(require = named)] fields: Value<'v>,
    ) -> anyhow::Result<ProviderCallable<'v>> {
        let mut names = Vec::new();
        let mut required = Vec::new();
        let mut defaults = Vec::new();
        let mut types = Vec::new();
        if let Some(d) = DictRef::from_value(fields) {
            for (k, v) in d.iter() {
                let name = k.unpack_str().ok_or(ProviderError::BadFields)?.to_owned();
                if let Some(pf) = ProviderField::from_value(v) {
                    required.push(pf.default.is_empty());
                    defaults.push(pf.default.first().map(|x| x.to_value()));
                    types.push(Some(pf.ty.to_value()));
                } else {
                    required.push(true);
                    defaults.push(None);
                    types.push(Some(v));
                }
                names.push(name);
            }
        } else {
            let items: Vec<Value> = if let Some(l) = ListRef::from_value(fields) {
                l.iter().collect()
            } else if let Some(t) = starlark::values::tuple::TupleRef::from_value(fields) {
                t.iter().collect()
            } else {
                return Err(ProviderError::BadFields.into());
            };
            for x in items {
                names.push(x.unpack_str().ok_or(ProviderError::BadFields)?.to_owned());
                required.push(false);
                defaults.push(None);
                types.push(None);
            }
        }
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                return Err(ProviderError::DuplicateField(n.clone()).into());
            }
        }
        Ok(ProviderCallable {
            uid: NEXT_UID.fetch_add(1, Ordering::SeqCst),
            fields: names,
            required,
            defaults,
            types,
            meta: OnceCell::new(),
            doc: doc.to_owned(),
        })
    }

    /// A typed provider field with an optional default.
    fn provider_field<'v>(
        #[starlark(require = pos)] ty: Value<'v>,
        #[starlark(require = named)] default: Option<Value<'v>>,
    ) -> anyhow::Result<ProviderField<'v>> {
        Ok(ProviderField {
            ty,
            default: default.into_iter().collect(),
        })
    }
}

impl<'v> starlark::values::AllocValue<'v> for ProviderCallable<'v> {
    fn alloc_value(self, heap: Heap<'v>) -> Value<'v> {
        heap.alloc_complex(self)
    }
}
