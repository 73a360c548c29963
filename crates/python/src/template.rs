//! `expand_uri_template` and the conversion of Python values to template values.

use crate::errors::{Failure, Outcome};
use std::collections::HashMap;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use rp_core::template::{self, Value};
use rp_core::text::single_quoted;

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
            match to_value(&v, held_none)? {
                Some(v) => pairs.push((key, v)),
                None => *held_none = true,
            }
        }
        return Ok(Some(Value::Map(pairs)));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for item in obj.try_iter()? {
            match to_value(&item?, held_none)? {
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

/// The defined variables, and the names whose value is `None` or holds one.
pub(crate) fn to_variables(
    vars: &Bound<'_, PyAny>,
) -> PyResult<(HashMap<String, Value>, Vec<String>)> {
    let mut out = HashMap::new();
    let mut nones = Vec::new();
    let items = vars.call_method0("items")?;
    for item in items.try_iter()? {
        let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let key = key
            .cast_into::<PyString>()
            .map_err(|_| PyTypeError::new_err("URI template variable names must be str"))?;
        let mut held_none = false;
        let converted = to_value(&value, &mut held_none)?;
        if converted.is_none() || held_none {
            nones.push(key.to_str()?.to_owned());
        }
        if let Some(value) = converted {
            out.insert(key.to_str()?.to_owned(), value);
        }
    }
    Ok((out, nones))
}

/// `None` is undefined, which RFC 6570 omits: right for `{?v}`, but in the path it would
/// address another resource (`/orders/{id}` with `id=None` is the collection), so it is a
/// `TypeError` there.
fn refuse_none_in_path(template: &str, nones: &[String]) -> Outcome<()> {
    if nones.is_empty() {
        return Ok(());
    }
    let in_path = template::path_variables(template)?;
    match nones.iter().find(|name| in_path.contains(name)) {
        None => Ok(()),
        Some(name) => Err(Failure::Py(PyTypeError::new_err(format!(
            "URI template variable {} is None (or holds None) in the path of {}: a path \
             variable needs a value (None is left out only in query expansions such as \
             {{?{name}}})",
            single_quoted(name),
            single_quoted(template)
        )))),
    }
}

/// Expand an RFC 6570 template (levels 1-4) with a mapping of variables.
#[pyfunction]
pub fn expand_uri_template(template: &str, variables: &Bound<'_, PyAny>) -> Outcome<String> {
    let (vars, nones) = to_variables(variables)?;
    refuse_none_in_path(template, &nones)?;
    Ok(template::expand(template, &vars)?)
}

/// The variable names a template declares, in order; `TemplateError` if it is malformed.
#[pyfunction]
pub fn template_variables(template: &str) -> Outcome<Vec<String>> {
    Ok(template::variables(template)?)
}
