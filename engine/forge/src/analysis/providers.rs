//! Providers: `provider()`, `provider_field()`, provider instances, provider collections and
//! the builtin providers (`DefaultInfo`, `RunInfo`, `ExternalRunnerTestInfo`, configuration
//! providers, ...).

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
use starlark::typing::{Ty, TyStarlarkValue, TyUser, TyUserFields, TyUserParams};
use starlark::values::dict::{AllocDict, DictRef};
use starlark::values::list::{AllocList, ListRef};
use starlark::values::typing::{TypeCompiled, TypeInstanceId};
use starlark::values::{
    starlark_value, AllocFrozenValue, Freeze, FreezeResult, Freezer, FrozenHeap, FrozenValue, Heap,
    NoSerialize, StarlarkValue, Trace, Value, ValueLike,
};

use super::artifact::StarlarkArtifact;
use super::cmd_args::{value_to_args, CmdArgsData, StarlarkCmdArgs};

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

static NEXT_UID: AtomicU64 = AtomicU64::new(1000);

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
    uid: u64,
    fields: Vec<String>,
    required: Vec<bool>,
    defaults: Vec<Option<Value<'v>>>,
    /// The declared type of each field (dict form), checked when an instance is made.
    types: Vec<Option<Value<'v>>>,
    #[allocative(skip)]
    #[trace(static)]
    meta: OnceCell<Arc<ProviderMeta>>,
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
        })
    }
}

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
    instance_meta: Arc<ProviderMeta>,
    defaults: Vec<Option<FrozenValue>>,
    types: Vec<Option<FrozenValue>>,
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

fn instantiate<'v>(
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

/// `DefaultInfo(default_output, default_outputs, other_outputs, sub_targets)` →
/// fields `default_outputs`, `other_outputs`, `sub_targets` as buck2 exposes them.
fn default_info_fields<'v>(v: Vec<Value<'v>>, heap: Heap<'v>) -> anyhow::Result<Vec<Value<'v>>> {
    let [one, many, other, subs]: [Value<'v>; 4] =
        v.try_into().expect("DefaultInfo has four parameters");
    let bad = |field: &str, expected: &str, got: Value| ProviderError::BadType {
        provider: "DefaultInfo".to_owned(),
        field: field.to_owned(),
        expected: expected.to_owned(),
        got: got.to_repr(),
    };
    if !one.is_none() && !many.is_none() {
        return Err(ProviderError::BothDefaultOutputs.into());
    }
    let mut outputs = Vec::new();
    if !one.is_none() {
        if StarlarkArtifact::from_value(one).is_none() {
            return Err(bad("default_output", "an artifact", one).into());
        }
        outputs.push(one);
    } else if !many.is_none() {
        let l = ListRef::from_value(many).ok_or_else(|| bad("default_outputs", "a list", many))?;
        for x in l.iter() {
            if StarlarkArtifact::from_value(x).is_none() {
                return Err(bad("default_outputs", "a list of artifacts", x).into());
            }
            outputs.push(x);
        }
    }
    let other_list = if other.is_none() {
        Vec::new()
    } else {
        ListRef::from_value(other)
            .ok_or_else(|| bad("other_outputs", "a list", other))?
            .iter()
            .collect()
    };
    let mut sub_entries = Vec::new();
    if !subs.is_none() {
        let d = DictRef::from_value(subs).ok_or_else(|| bad("sub_targets", "a dict", subs))?;
        for (k, v) in d.iter() {
            let name = k
                .unpack_str()
                .ok_or_else(|| bad("sub_targets", "a dict keyed by strings", k))?
                .to_owned();
            let coll = if ProviderCollection::from_value(v).is_some() {
                v
            } else {
                let l = ListRef::from_value(v)
                    .ok_or_else(|| bad("sub_targets", "a dict of provider lists", v))?;
                heap.alloc(ProviderCollection::from_providers(l.iter().collect())?)
            };
            sub_entries.push((name, coll));
        }
    }
    Ok(vec![
        heap.alloc(AllocList(outputs)),
        heap.alloc(AllocList(other_list)),
        heap.alloc(AllocDict(sub_entries)),
    ])
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

/// Field values of a provider instance value, if it is one.
pub fn as_provider<'v>(v: Value<'v>) -> Option<(&'v Arc<ProviderMeta>, Vec<Value<'v>>)> {
    ProviderInstance::from_value(v)
        .map(|p| (&p.meta, p.values.iter().map(|x| x.to_value()).collect()))
}

/// `RunInfo.args` as command line data, when `v` is a `RunInfo`.
pub fn run_info_args(v: Value) -> Option<Arc<CmdArgsData>> {
    let p = ProviderInstance::from_value(v)?;
    if p.meta.builtin != Some(Builtin::RunInfo) {
        return None;
    }
    StarlarkCmdArgs::from_value(p.values[0].to_value()).map(|c| Arc::new(c.data()))
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

// ---------------------------------------------------------------------------------------
// Globals

fn builtin(
    name: &str,
    uid: u64,
    fields: &[&str],
    required: &[&str],
    positional: usize,
    kind: Builtin,
) -> FrozenProviderCallable {
    let fields: Vec<String> = fields.iter().map(|s| (*s).to_owned()).collect();
    let req = fields
        .iter()
        .map(|f| required.contains(&f.as_str()))
        .collect();
    let n = fields.len();
    let meta = ProviderMeta::new(uid, name, fields, req, positional, Some(kind))
        .expect("builtin provider types are valid");
    let instance_meta = if kind == Builtin::DefaultInfo {
        // `default_output` is folded into `default_outputs`, as buck2 exposes it.
        let fields: Vec<String> = ["default_outputs", "other_outputs", "sub_targets"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        ProviderMeta::new(uid, name, fields, vec![false; 3], 0, Some(kind))
            .expect("builtin provider types are valid")
    } else {
        meta.clone()
    };
    FrozenProviderCallable {
        meta,
        instance_meta,
        defaults: vec![None; n],
        types: vec![None; n],
    }
}

pub const DEFAULT_INFO_UID: u64 = 1;
pub const RUN_INFO_UID: u64 = 2;
pub const TEST_INFO_UID: u64 = 3;
pub const CONFIGURATION_INFO_UID: u64 = 4;
pub const PLATFORM_INFO_UID: u64 = 5;
pub const CONSTRAINT_SETTING_INFO_UID: u64 = 6;
pub const CONSTRAINT_VALUE_INFO_UID: u64 = 7;
pub const TEMPLATE_PLACEHOLDER_INFO_UID: u64 = 8;
pub const EXECUTION_PLATFORM_INFO_UID: u64 = 9;
pub const EXECUTION_PLATFORM_REGISTRATION_INFO_UID: u64 = 10;
pub const COMMAND_EXECUTOR_CONFIG_UID: u64 = 11;

pub fn register_provider_globals(builder: &mut GlobalsBuilder) {
    builder.set(
        "DefaultInfo",
        builtin(
            "DefaultInfo",
            DEFAULT_INFO_UID,
            &[
                "default_output",
                "default_outputs",
                "other_outputs",
                "sub_targets",
            ],
            &[],
            1,
            Builtin::DefaultInfo,
        ),
    );
    builder.set(
        "RunInfo",
        builtin("RunInfo", RUN_INFO_UID, &["args"], &[], 1, Builtin::RunInfo),
    );
    builder.set(
        "ExternalRunnerTestInfo",
        builtin(
            "ExternalRunnerTestInfo",
            TEST_INFO_UID,
            &[
                "type",
                "command",
                "env",
                "labels",
                "contacts",
                "use_project_relative_paths",
                "run_from_project_root",
                "default_executor",
                "executor_overrides",
                "local_resources",
                "required_local_resources",
                "worker",
                "supports_test_execution_caching",
            ],
            &["type"],
            0,
            Builtin::ExternalRunnerTestInfo,
        ),
    );
    let plain: &[(&str, u64, &[&str], &[&str])] = &[
        (
            "ConfigurationInfo",
            CONFIGURATION_INFO_UID,
            &["constraints", "values"],
            &["constraints", "values"],
        ),
        (
            "PlatformInfo",
            PLATFORM_INFO_UID,
            &["label", "configuration"],
            &["label", "configuration"],
        ),
        (
            "ConstraintSettingInfo",
            CONSTRAINT_SETTING_INFO_UID,
            &["label", "default"],
            &["label"],
        ),
        (
            "ConstraintValueInfo",
            CONSTRAINT_VALUE_INFO_UID,
            &["setting", "label"],
            &["setting", "label"],
        ),
        (
            "TemplatePlaceholderInfo",
            TEMPLATE_PLACEHOLDER_INFO_UID,
            &["unkeyed_variables", "keyed_variables"],
            &[],
        ),
        (
            "ExecutionPlatformInfo",
            EXECUTION_PLATFORM_INFO_UID,
            &["label", "configuration", "executor_config"],
            &["label", "configuration", "executor_config"],
        ),
        (
            "ExecutionPlatformRegistrationInfo",
            EXECUTION_PLATFORM_REGISTRATION_INFO_UID,
            &["platforms", "fallback", "exec_marker_constraint"],
            &["platforms"],
        ),
        (
            "CommandExecutorConfig",
            COMMAND_EXECUTOR_CONFIG_UID,
            &[
                "local_enabled",
                "remote_enabled",
                "remote_cache_enabled",
                "remote_dep_file_cache_enabled",
                "remote_execution_properties",
                "remote_execution_action_key",
                "remote_execution_max_input_files_mebibytes",
                "remote_execution_queue_time_threshold_s",
                "remote_execution_use_case",
                "use_limited_hybrid",
                "allow_limited_hybrid_fallbacks",
                "allow_hybrid_fallbacks_on_failure",
                "use_windows_path_separators",
                "use_persistent_workers",
                "use_bazel_protocol_remote_persistent_workers",
                "allow_cache_uploads",
                "max_cache_upload_mebibytes",
                "experimental_low_pass_filter",
                "remote_output_paths",
                "network_access",
                "remote_execution_resource_units",
                "remote_execution_dependencies",
                "remote_execution_gang_workers",
                "remote_execution_dynamic_image",
                "meta_internal_extra_params",
                "priority",
            ],
            &["local_enabled", "remote_enabled"],
        ),
    ];
    for (name, uid, fields, required) in plain {
        builder.set(
            name,
            builtin(name, *uid, fields, required, 0, Builtin::Plain),
        );
    }
    register_provider_functions(builder);
}

#[starlark_module]
fn register_provider_functions(builder: &mut GlobalsBuilder) {
    /// Declares a provider type: `FooInfo = provider(fields = ["a"])` or
    /// `provider(fields = {"a": provider_field(int, default = 0)})`.
    fn provider<'v>(
        #[starlark(require = named, default = "")] doc: &str,
        #[starlark(require = named)] fields: Value<'v>,
    ) -> anyhow::Result<ProviderCallable<'v>> {
        let _ = doc;
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

starlark::methods_static!(COLLECTION_METHODS = collection_methods);
