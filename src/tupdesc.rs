//! The columns of a relation's tuple descriptor, as PostgreSQL 15 and 17+ keep them (17 moved
//! the full attributes behind `TupleDescAttr`, keeping compact ones in the descriptor).

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
            #[cfg(feature = "pg15")]
            let att = &*(*desc).attrs.as_ptr().add(i);
            #[cfg(not(feature = "pg15"))]
            let att = &*pg_sys::TupleDescAttr(desc, i as i32);
            att
        };
        // SAFETY: an attribute's name is a NUL-terminated NameData
        let name = unsafe { CStr::from_ptr(att.attname.data.as_ptr()) };
        (!att.attisdropped).then_some((i, name, att))
    })
}
