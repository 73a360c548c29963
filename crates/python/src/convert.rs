//! Values across the boundary: request bodies, Python objects -> JSON bytes (POST/PATCH);
//! response headers, handed over as they came (`ResponseHeaders`). Response bodies go the other
//! way in `document.rs`.

use http::HeaderMap;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyIterator, PyList, PyString, PyTuple};

/// A response's headers as the core received them. Python's `Headers` iterates them once, on
/// first use: building the (name, value) strings of every response cost more than the rest of
/// the reply but the body, and most responses' headers are never read.
#[pyclass(module = "recurring_payments._core", frozen)]
pub struct ResponseHeaders(HeaderMap);

impl From<HeaderMap> for ResponseHeaders {
    fn from(headers: HeaderMap) -> Self {
        ResponseHeaders(headers)
    }
}

#[pymethods]
impl ResponseHeaders {
    /// The (name, value) pairs in the order received, names in lower case; a value that is not
    /// UTF-8 is decoded lossily.
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyIterator>> {
        let pairs = PyList::empty(py);
        for (name, value) in &self.0 {
            let value = String::from_utf8_lossy(value.as_bytes());
            pairs.append((PyString::new(py, name.as_str()), value))?;
        }
        pairs.try_iter()
    }
}

/// Deepest body we serialise; deeper is surely a cycle or a mistake.
const MAX_DEPTH: usize = 256;

/// Serialise a request body. `Decimal` is written with its exact digits (money stays exact).
pub fn to_json_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    write_value(obj, &mut out, 0)?;
    Ok(out)
}

fn write_str(s: &str, out: &mut Vec<u8>) -> PyResult<()> {
    serde_json::to_writer(&mut *out, s).map_err(|e| PyValueError::new_err(e.to_string()))
}

fn write_value(obj: &Bound<'_, PyAny>, out: &mut Vec<u8>, depth: usize) -> PyResult<()> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(
            "request body nested too deeply (a cycle?)",
        ));
    }
    if obj.is_none() {
        out.extend_from_slice(b"null");
    } else if let Ok(s) = obj.cast::<PyString>() {
        write_str(s.to_str()?, out)?;
    } else if let Ok(b) = obj.cast::<PyBool>() {
        out.extend_from_slice(if b.is_true() { b"true" } else { b"false" });
    } else if obj.is_instance_of::<PyInt>() {
        out.extend_from_slice(obj.str()?.to_str()?.as_bytes());
    } else if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        if !v.is_finite() {
            return Err(PyValueError::new_err(
                "request body contains NaN or infinity",
            ));
        }
        out.extend_from_slice(f.repr()?.to_str()?.as_bytes());
    } else if let Ok(d) = obj.cast::<PyDict>() {
        out.push(b'{');
        for (i, (k, v)) in d.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let key = k
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("request body keys must be str"))?;
            write_str(key.to_str()?, out)?;
            out.push(b':');
            write_value(&v, out, depth + 1)?;
        }
        out.push(b'}');
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        out.push(b'[');
        for (i, item) in obj.try_iter()?.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_value(&item?, out, depth + 1)?;
        }
        out.push(b']');
    } else if is_decimal(obj)? {
        let text = obj.str()?;
        let text = text.to_str()?;
        if !text
            .bytes()
            .all(|b| b.is_ascii_digit() || b"-+.eE".contains(&b))
        {
            return Err(PyValueError::new_err(
                "request body contains a non-finite Decimal",
            ));
        }
        out.extend_from_slice(text.as_bytes());
    } else if let Ok(mapping) = obj.cast::<pyo3::types::PyMapping>() {
        // Other mappings (a Resource's state, MappingProxy ...): as a dict.
        let as_dict = PyDict::new(obj.py());
        for item in mapping.items()?.try_iter()? {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            as_dict.set_item(k, v)?;
        }
        write_value(as_dict.as_any(), out, depth + 1)?;
    } else {
        return Err(PyTypeError::new_err(format!(
            "request body: {} is not JSON serialisable",
            obj.get_type().name()?
        )));
    }
    Ok(())
}

fn is_decimal(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let ty = obj.get_type();
    Ok(ty.name()? == "Decimal" && ty.module()? == "decimal")
}
