//! Objects the cycle collector never needs to see. Every `#[pyclass]` is a GC type, so each
//! response `Document` and each item of a 5,000-item page was traversed at every collection
//! while the page was alive. An object that holds no Python object, or only strings and
//! numbers (which reference nothing), cannot be part of a reference cycle: untracking it can
//! only make the collector see fewer objects, never free one too early (what an untracked
//! object references counts as referenced from outside).
//!
//! A page's embedded `Resource`s are made untracked too (`untracked_items`): while nothing
//! was read of them but fields, what they hold (their session, document and CURIEs) cannot
//! lead back to them, and the Python layer tracks one again (`track`) before it keeps
//! anything else (links, embedded resources, relations read as attributes).

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple, PyType};
use pyo3::PyClass;

/// `value` as a new Python object that the cycle collector does not track. Only for values
/// that never hold, now or later, a Python object other than a string or a number.
pub(crate) fn new_untracked<T: PyClass + Into<PyClassInitializer<T>>>(
    py: Python<'_>,
    value: T,
) -> PyResult<Bound<'_, T>> {
    let object = Bound::new(py, value)?;
    untrack(object.as_any());
    Ok(object)
}

/// The resources of an embedded array, made without running Python: for each of `docs`,
/// `object.__new__(cls)` with each slot of `slots` set to its value (the same for every
/// item) and `doc_slot` to the document, through the slots' own descriptors (as
/// `self._x = ...` would). What `cls._item` makes, at half its cost (a page makes 5,000).
///
/// Each item is untracked by the cycle collector as soon as it is made, so that none is ever
/// in a generation: the collections a 5,000-item page triggers then find nothing to traverse
/// and promote, and trigger no full collection of the whole heap (~20 ms in a process with a
/// large heap, BENCHMARKS.md). The caller vouches that what an item holds cannot lead back
/// to it, and that `slots` and `doc_slot` are all of `cls`'s slots.
#[pyfunction]
pub(crate) fn untracked_items<'py>(
    cls: &Bound<'py, PyType>,
    docs: &Bound<'py, PyList>,
    doc_slot: &Bound<'py, PyAny>,
    slots: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
) -> PyResult<Bound<'py, PyList>> {
    let py = cls.py();
    let doc_setter = slot_setter(doc_slot)?;
    let setters = slots
        .iter()
        .map(|(descriptor, value)| Ok((descriptor, slot_setter(descriptor)?, value)))
        .collect::<PyResult<Vec<_>>>()?;
    let no_arguments = PyTuple::empty(py);
    let mut items = Vec::with_capacity(docs.len());
    for doc in docs.iter() {
        let item = new_object(cls, &no_arguments)?;
        for (descriptor, set, value) in &setters {
            set.call(descriptor, &item, value)?;
        }
        doc_setter.call(doc_slot, &item, &doc)?;
        untrack(&item);
        items.push(item);
    }
    PyList::new(py, items)
}

/// A descriptor's `__set__`, as the C function of its type.
struct Setter(ffi::descrsetfunc);

impl Setter {
    fn call(
        &self,
        descriptor: &Bound<'_, PyAny>,
        object: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        // SAFETY: the function is the `tp_descr_set` of `descriptor`'s type (`slot_setter`),
        // called as Python calls it: with the descriptor, the object and the value, all alive.
        #[allow(unsafe_code)]
        let status = unsafe { (self.0)(descriptor.as_ptr(), object.as_ptr(), value.as_ptr()) };
        if status < 0 {
            return Err(PyErr::fetch(object.py()));
        }
        Ok(())
    }
}

/// The `__set__` of a slot's descriptor (a `member_descriptor`: `type(cls.__dict__[name])`).
fn slot_setter(descriptor: &Bound<'_, PyAny>) -> PyResult<Setter> {
    let kind = descriptor.get_type();
    if kind.name()? != "member_descriptor" {
        return Err(PyTypeError::new_err(format!(
            "not a slot's descriptor: {}",
            kind.name()?
        )));
    }
    // SAFETY: `kind` is a live type object; `PyType_GetSlot` reads static types from 3.10 on.
    #[allow(unsafe_code)]
    let function = unsafe { ffi::PyType_GetSlot(kind.as_type_ptr(), ffi::Py_tp_descr_set) };
    if function.is_null() {
        return Err(PyTypeError::new_err("a slot's descriptor without __set__"));
    }
    // SAFETY: what `Py_tp_descr_set` holds is a `descrsetfunc`.
    #[allow(unsafe_code)]
    Ok(Setter(unsafe {
        std::mem::transmute::<*mut std::ffi::c_void, ffi::descrsetfunc>(function)
    }))
}

/// `object.__new__(cls)`: the instance, slots unset, as `object.__new__` makes it (refusing
/// an abstract class).
fn new_object<'py>(
    cls: &Bound<'py, PyType>,
    no_arguments: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `object`'s `tp_new` with a type (a subclass of `object`, as every class is) and
    // an empty argument tuple, as `object.__new__(cls)` calls it; a null result sets an error.
    #[allow(unsafe_code)]
    unsafe {
        let base = std::ptr::addr_of_mut!(ffi::PyBaseObject_Type);
        let new = ffi::PyType_GetSlot(base, ffi::Py_tp_new);
        let new = std::mem::transmute::<*mut std::ffi::c_void, ffi::newfunc>(new);
        let object = new(
            cls.as_type_ptr(),
            no_arguments.as_ptr(),
            std::ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(cls.py(), object)
    }
}

/// Track `object` again if it is a GC object the collector does not track (else nothing):
/// before an untracked item keeps an object through which a cycle could close.
#[pyfunction]
pub(crate) fn track(object: &Bound<'_, PyAny>) {
    let pointer = object.as_ptr();
    // SAFETY: `object` is alive (we hold a reference) and fully made. Tracking is only for GC
    // objects (checked by their type's flag) that are not tracked (checked first: tracking
    // one twice is a fatal error).
    #[allow(unsafe_code)]
    unsafe {
        if is_gc(pointer) && ffi::PyObject_GC_IsTracked(pointer) == 0 {
            ffi::PyObject_GC_Track(pointer.cast());
        }
    }
}

/// Stop the collector tracking `object`, if it is a GC object (else nothing).
fn untrack(object: &Bound<'_, PyAny>) {
    let pointer = object.as_ptr();
    // SAFETY: `object` is alive (we hold a reference); untracking a GC object is allowed at
    // any time, tracked or not (CPython's and pyo3's deallocators untrack again harmlessly).
    // A non-GC object has no GC header to touch: checked by its type's flag.
    #[allow(unsafe_code)]
    unsafe {
        if is_gc(pointer) {
            ffi::PyObject_GC_UnTrack(pointer.cast());
        }
    }
}

/// Whether `object`'s type is a GC type (has the collector's header before the object).
///
/// # Safety
/// `object` must point to a live Python object.
#[allow(unsafe_code)]
unsafe fn is_gc(object: *mut ffi::PyObject) -> bool {
    // SAFETY: a live object has a live type.
    unsafe { ffi::PyType_HasFeature(ffi::Py_TYPE(object), ffi::Py_TPFLAGS_HAVE_GC) != 0 }
}
