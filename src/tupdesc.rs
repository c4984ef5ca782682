//! The columns of a relation's tuple descriptor, as PostgreSQL 15-17 and 18 keep them (18 moved
//! the full attributes behind `TupleDescAttr`, keeping compact ones in the descriptor), and a
//! row of one taken apart.

use std::ffi::CStr;

use pgrx::pg_sys;

/// The type of each column of `desc`, by index (InvalidOid for a dropped one).
///
/// # Safety
/// `desc` is a valid tuple descriptor.
pub unsafe fn types(desc: pg_sys::TupleDesc) -> Vec<pg_sys::Oid> {
    // SAFETY: the caller's; `natts` counts its attributes
    let mut types = vec![pg_sys::InvalidOid; unsafe { (*desc).natts } as usize];
    for (i, _, att) in unsafe { columns(desc) } {
        types[i] = att.atttypid;
    }
    types
}

/// Each column of `desc` that is not dropped: its index (attribute number − 1), its name and
/// its attribute.
///
/// # Safety
/// `desc` is a valid tuple descriptor that outlives the iteration and what it yields.
pub unsafe fn columns<'a>(
    desc: pg_sys::TupleDesc,
) -> impl Iterator<Item = (usize, &'a CStr, &'a pg_sys::FormData_pg_attribute)> {
    // SAFETY: the caller's: `desc` is valid, and `natts` counts its attributes
    let natts = unsafe { (*desc).natts } as usize;
    (0..natts).filter_map(move |i| {
        // SAFETY: `i` is below `natts`
        let att = unsafe {
            #[cfg(not(feature = "pg18"))]
            let att = &*(*desc).attrs.as_ptr().add(i);
            #[cfg(feature = "pg18")]
            let att = &*pg_sys::TupleDescAttr(desc, i as i32);
            att
        };
        // SAFETY: an attribute's name is a NUL-terminated NameData
        let name = unsafe { CStr::from_ptr(att.attname.data.as_ptr()) };
        (!att.attisdropped).then_some((i, name, att))
    })
}

/// A row taken apart once (`heap_deform_tuple`): each column's datum and whether it is NULL,
/// by index (attribute number − 1). Reading a column of the row itself walks every column
/// before it, each time. Its values may point into the row it was taken from.
pub struct Deformed {
    values: Vec<pg_sys::Datum>,
    nulls: Vec<bool>,
}

impl Deformed {
    /// Room for a row of `desc`, every column NULL.
    ///
    /// # Safety
    /// `desc` is a valid tuple descriptor.
    pub unsafe fn room(desc: pg_sys::TupleDesc) -> Deformed {
        // SAFETY: the caller's; `natts` counts its attributes
        let n = unsafe { (*desc).natts } as usize;
        Deformed { values: vec![pg_sys::Datum::from(0); n], nulls: vec![true; n] }
    }

    /// `tuple` taken apart.
    ///
    /// # Safety
    /// As `fill`.
    pub unsafe fn of(tuple: pg_sys::HeapTuple, desc: pg_sys::TupleDesc) -> Deformed {
        // SAFETY: the caller's
        unsafe {
            let mut row = Deformed::room(desc);
            row.fill(tuple, desc);
            row
        }
    }

    /// Takes `tuple` apart in place of the row held.
    ///
    /// # Safety
    /// `tuple` is a valid row of `desc`, the descriptor this was made for, and outlives the
    /// values read.
    pub unsafe fn fill(&mut self, tuple: pg_sys::HeapTuple, desc: pg_sys::TupleDesc) {
        // SAFETY: the caller's; the arrays have a place for each of the descriptor's attributes
        unsafe { pg_sys::heap_deform_tuple(tuple, desc, self.values.as_mut_ptr(), self.nulls.as_mut_ptr()) };
    }

    /// Column `i`'s value (None: NULL, or past the row's columns).
    pub fn get(&self, i: usize) -> Option<pg_sys::Datum> {
        (!self.nulls.get(i).copied().unwrap_or(true)).then(|| self.values[i])
    }

    /// Sets column `i` to `value` (None: NULL).
    pub fn set(&mut self, i: usize, value: Option<pg_sys::Datum>) {
        self.values[i] = value.unwrap_or(pg_sys::Datum::from(0));
        self.nulls[i] = value.is_none();
    }
}
