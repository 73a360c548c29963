//! New objects of the Python subclasses of the native bases (`_ResourceCore`, `_LinkCore`)
//! made without running Python (what `Resource._make` and `_LinkBase._plain` stand for): the
//! native value placed in a new object of the subclass, with no attribute lookup, argument
//! tuple or argument parsing (~850 instructions fewer an item of a page); or, where
//! the native type is not at hand, the subclass's `tp_new` called with an argument tuple.

use std::marker::PhantomData;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};
use pyo3::{PyClass, PyClassInitializer};

/// Makes objects of `cls`, a subclass of the native `T` that keeps `T`'s `__new__`, from `T`'s
/// value: what that `__new__` does once it has parsed its arguments.
pub(crate) struct Maker<'a, 'py, T> {
    cls: &'a Bound<'py, PyType>,
    native: PhantomData<T>,
}

impl<'a, 'py, T: PyClass> Maker<'a, 'py, T> {
    /// A maker of `cls`'s objects; an error if `cls` is not a subclass of `T` or overrides
    /// `__new__` (whose code would then not run).
    pub(crate) fn of(cls: &'a Bound<'py, PyType>) -> PyResult<Self> {
        if !cls.is_subclass_of::<T>()? {
            return Err(PyTypeError::new_err(format!(
                "{} is not a native resource or link class",
                cls.name()?
            )));
        }
        let address = |new: Option<ffi::newfunc>| new.map(|new| new as usize);
        if address(tp_new(cls)) != address(tp_new(&T::type_object(cls.py()))) {
            return Err(PyTypeError::new_err(format!(
                "{} overrides __new__",
                cls.name()?
            )));
        }
        Ok(Maker {
            cls,
            native: PhantomData,
        })
    }

    /// A new object of the class, holding `value`.
    pub(crate) fn make(
        &self,
        value: impl Into<PyClassInitializer<T>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.cls.py();
        // SAFETY: `cls` is `T`'s type object or a subclass that inherits `T`'s `tp_new` (`of`),
        // which is what `tp_new_impl` asks of it: the object is laid out as `T`'s `__new__`
        // lays it out. A non-null result is a new reference.
        #[allow(unsafe_code)]
        unsafe {
            let made =
                pyo3::impl_::pymethods::tp_new_impl(py, value.into(), self.cls.as_type_ptr())?;
            Ok(Bound::from_owned_ptr(py, made))
        }
    }
}

/// A new object of `cls` as `cls.__new__(cls, *args)` makes it, without the attribute lookup:
/// for the `Resource` a link's call makes, whose native base the link's module does not name
/// (`resource.rs` uses `link.rs`, not the other way round).
pub(crate) fn new_with_args<'py>(
    cls: &Bound<'py, PyType>,
    args: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    let Some(new) = tp_new(cls) else {
        return Err(PyTypeError::new_err(format!(
            "{} has no __new__",
            cls.name()?
        )));
    };
    // SAFETY: `cls`'s own `tp_new` with `cls` and an argument tuple, both alive; a null result
    // sets an error.
    #[allow(unsafe_code)]
    unsafe {
        let made = new(cls.as_type_ptr(), args.as_ptr(), std::ptr::null_mut());
        Bound::from_owned_ptr_or_err(cls.py(), made)
    }
}

/// `cls`'s `tp_new` slot.
fn tp_new(cls: &Bound<'_, PyType>) -> Option<ffi::newfunc> {
    // SAFETY: `cls` is a live type object; `PyType_GetSlot` reads static types from 3.10 on.
    #[allow(unsafe_code)]
    let new = unsafe { ffi::PyType_GetSlot(cls.as_type_ptr(), ffi::Py_tp_new) };
    // SAFETY: what `Py_tp_new` holds is a `newfunc`, or null.
    #[allow(unsafe_code)]
    (!new.is_null())
        .then(|| unsafe { std::mem::transmute::<*mut std::ffi::c_void, ffi::newfunc>(new) })
}
