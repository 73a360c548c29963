//! `expand_uri_template` and the conversion of Python values to template values.

use crate::errors::Fallible;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use rp_core::request::{self, Target, Variables};
use rp_core::template::{self, Value};

/// A value inside a list or dict: RFC 6570 has no nested lists or dicts (std-uritemplate
/// refused them as a malformed template, quoting its own debug form of the value).
fn scalar(value: Option<Value>, within: &str) -> PyResult<Option<Value>> {
    match value {
        Some(Value::List(_)) | Some(Value::Map(_)) => Err(PyTypeError::new_err(format!(
            "a {within} given as a URI template value holds str, int, float or bool values, \
             not lists or dicts (RFC 6570 has no nested values)"
        ))),
        value => Ok(value),
    }
}

/// Convert one Python value; `None` means undefined (the variable is skipped). A `None` inside a
/// list or dict is skipped too, and reported through `held_none`.
pub(crate) fn to_value(obj: &Bound<'_, PyAny>, held_none: &mut bool) -> PyResult<Option<Value>> {
    if obj.is_none() {
        return Ok(None);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Some(Value::String(s.to_str()?.to_owned())));
    }
    // bool before int: Python's bool is an int. Templates render them as JSON does.
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Some(Value::String(
            if b.is_true() { "true" } else { "false" }.into(),
        )));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Some(match obj.extract::<i64>() {
            Ok(i) => Value::Integer(i),
            Err(_) => Value::String(obj.str()?.to_str()?.to_owned()),
        }));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Some(Value::String(f.str()?.to_str()?.to_owned())));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut pairs = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = k.str()?.to_str()?.to_owned();
            match scalar(to_value(&v, held_none)?, "dict")? {
                Some(v) => pairs.push((key, v)),
                None => *held_none = true,
            }
        }
        return Ok(Some(Value::Map(pairs)));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for item in obj.try_iter()? {
            match scalar(to_value(&item?, held_none)?, "list")? {
                Some(v) => items.push(v),
                None => *held_none = true,
            }
        }
        return Ok(Some(Value::List(items)));
    }
    Err(PyTypeError::new_err(format!(
        "URI template values must be str, int, float, bool, list, tuple or dict, not {}",
        obj.get_type().name()?
    )))
}

/// The variables of a mapping (kwargs), in the order given.
pub(crate) fn to_variables(vars: &Bound<'_, PyAny>) -> PyResult<Variables> {
    let mut out = Variables::default();
    let mut add = |key: Bound<'_, PyAny>, value: Bound<'_, PyAny>| -> PyResult<()> {
        let key = key
            .cast_into::<PyString>()
            .map_err(|_| PyTypeError::new_err("URI template variable names must be str"))?;
        let mut held_none = false;
        let converted = to_value(&value, &mut held_none)?;
        out.insert(key.to_str()?.to_owned(), converted, held_none);
        Ok(())
    };
    if let Ok(dict) = vars.cast::<PyDict>() {
        // The common case (a call's **variables): no `items()` view to build.
        for (key, value) in dict.iter() {
            add(key, value)?;
        }
    } else {
        for item in vars.call_method0("items")?.try_iter()? {
            let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            add(key, value)?;
        }
    }
    Ok(out)
}

/// Expand an RFC 6570 template (levels 1-4) with a mapping of variables.
#[pyfunction]
pub fn expand_uri_template(template: &str, variables: &Bound<'_, PyAny>) -> Fallible<String> {
    Ok(request::expand(template, &to_variables(variables)?)?)
}

/// The href a link or call addresses: `href` checked, expanded with `variables` and resolved
/// against `base_url` (what `send` would request), without a client. `Link.expand` uses it.
#[pyfunction]
#[pyo3(signature = (base_url, href, variables=None, templated=None, name=None))]
pub fn expand_target(
    base_url: &str,
    href: String,
    variables: Option<&Bound<'_, PyAny>>,
    templated: Option<bool>,
    name: Option<&str>,
) -> Fallible<String> {
    let target = target_from(href, variables, templated, name)?;
    let base = rp_core::url::parse_base(base_url)?;
    Ok(target.resolve(&base, name)?.to_string())
}

/// A request target from its Python parts.
pub(crate) fn target_from(
    href: String,
    variables: Option<&Bound<'_, PyAny>>,
    templated: Option<bool>,
    name: Option<&str>,
) -> Fallible<Target> {
    Ok(Target::new(
        href,
        templated,
        variables_of(variables)?,
        name,
    )?)
}

/// The variables of a call: a mapping, or none (`None`).
pub(crate) fn variables_of(variables: Option<&Bound<'_, PyAny>>) -> PyResult<Variables> {
    match variables {
        Some(v) if !v.is_none() => to_variables(v),
        _ => Ok(Variables::default()),
    }
}

/// The variable names a template declares, in order; `TemplateError` if it is malformed.
#[pyfunction]
pub fn template_variables(template: &str) -> Fallible<Vec<String>> {
    Ok(template::variables(template)?)
}
