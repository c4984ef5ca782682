//! What the store looks up about the extension's own tables and this backend, below every
//! other module of the store: a table's oid, the local transaction, whether a table is still
//! as the extension made it, and what a backend found looking at one (kept until a relation
//! cache invalidation names it).

use std::cell::RefCell;
use std::rc::Rc;

use pgrx::pg_sys;

/// The oid of table `todo.<name>`, or InvalidOid.
pub fn relid(name: &std::ffi::CStr) -> pg_sys::Oid {
    // SAFETY: catalog lookups by name (cached); a missing schema or table gives InvalidOid.
    unsafe {
        let schema = pg_sys::get_namespace_oid(c"todo".as_ptr(), true);
        if schema == pg_sys::InvalidOid {
            return pg_sys::InvalidOid;
        }
        pg_sys::get_relname_relid(name.as_ptr(), schema)
    }
}

/// This backend's local transaction id (which transaction state kept in thread-locals is of).
pub fn local_xact() -> pg_sys::LocalTransactionId {
    // SAFETY: MyProc is set for every backend that runs SQL.
    #[cfg(any(feature = "pg15", feature = "pg16"))]
    let lxid = unsafe { (*pg_sys::MyProc).lxid };
    // PostgreSQL 17 moved it into the virtual transaction id
    #[cfg(not(any(feature = "pg15", feature = "pg16")))]
    let lxid = unsafe { (*pg_sys::MyProc).vxid.lxid };
    lxid
}

/// Whether the table is written exactly as the extension made it, so that a row may be
/// written straight to its heap and indexes as a statement would write it: a plain table, no
/// trigger but the checks of its own foreign keys, no rule, every index on plain columns,
/// without a predicate and checked at once.
///
/// # Safety
/// `rel` is open.
pub unsafe fn as_made(rel: pg_sys::Relation) -> bool {
    unsafe {
        (*(*rel).rd_rel).relkind == pg_sys::RELKIND_RELATION as std::ffi::c_char
            && only_key_checks((*rel).trigdesc)
            && (*rel).rd_rules.is_null()
            && plain_indexes(rel)
    }
}

/// Whether the only triggers are the checks of the table's own foreign keys (to
/// `todo.tenants`: a row's tenant, whose row the todo's foreign key holds already).
///
/// # Safety
/// `triggers` is an open relation's trigger description, or null.
unsafe fn only_key_checks(triggers: *mut pg_sys::TriggerDesc) -> bool {
    if triggers.is_null() {
        return true;
    }
    unsafe {
        (0..(*triggers).numtriggers as usize).all(|i| {
            let trigger = &*(*triggers).triggers.add(i);
            trigger.tgisinternal && pg_sys::RI_FKey_trigger_type(trigger.tgfoid) == pg_sys::RI_TRIGGER_FK as i32
        })
    }
}

/// Whether every index of `rel` is on plain columns, without a predicate, and checked at once.
///
/// # Safety
/// `rel` is open.
unsafe fn plain_indexes(rel: pg_sys::Relation) -> bool {
    unsafe {
        let indexes = pg_sys::CatalogOpenIndexes(rel);
        let mut plain = true;
        for i in 0..(*indexes).ri_NumIndices as usize {
            let info = &**(*indexes).ri_IndexRelationInfo.add(i);
            let index = *(*indexes).ri_IndexRelationDescs.add(i);
            plain &= info.ii_Expressions.is_null()
                && info.ii_Predicate.is_null()
                && info.ii_ExclusionOps.is_null()
                && (*(*index).rd_index).indimmediate;
        }
        pg_sys::CatalogCloseIndexes(indexes);
        plain
    }
}

/// What this backend found looking at one of the extension's tables (`get`), kept until a
/// relation cache invalidation names it (`forget`). Held in a module's thread-local.
pub struct Lookup<T>(RefCell<Option<Option<Rc<T>>>>);

impl<T> Default for Lookup<T> {
    fn default() -> Lookup<T> {
        Lookup::new()
    }
}

impl<T> Lookup<T> {
    pub const fn new() -> Lookup<T> {
        Lookup(RefCell::new(None))
    }

    /// What was found (None: nothing usable), looked at (`look_at`) only the first time.
    pub fn get(&self, look_at: impl FnOnce() -> Option<T>) -> Option<Rc<T>> {
        if let Some(known) = self.0.borrow().clone() {
            return known;
        }
        // (not borrowed while looking: opening a table may run this backend's invalidations)
        let found = look_at().map(Rc::new);
        *self.0.borrow_mut() = Some(found.clone());
        found
    }

    /// A relation cache invalidation of `relid` (InvalidOid: every relation): forgets what was
    /// found when it is about that relation (`about`), or when nothing usable was (the table
    /// may just have been made or changed).
    pub fn forget(&self, relid: pg_sys::Oid, about: impl Fn(&T) -> bool) {
        let mut found = self.0.borrow_mut();
        let known = match found.as_ref() {
            Some(Some(table)) => about(table),
            _ => true,
        };
        if relid == pg_sys::InvalidOid || known {
            *found = None;
        }
    }
}
