//! The tenants in a batch of PostgreSQL's logical replication messages (pgoutput, protocol
//! version 1), as `pg_logical_slot_get_binary_changes` returns them for a publication of
//! `todo.events`: each Relation message says where the relation's `tenant_id` column is, each
//! Insert message carries a row in text form. Only the tenant is read; the rest of the row is
//! never looked at (decoding bypasses row-level security: what a client receives is read
//! again, acting for its tenant, by `todo.changes_since`).
//!
//! The format: <https://www.postgresql.org/docs/current/protocol-logicalrep-message-formats.html>.

use std::collections::HashMap;

/// What the messages so far said about each relation (by oid): where its `tenant_id` is.
#[derive(Default)]
pub struct Relations {
    tenant_column: HashMap<u32, Option<usize>>,
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.bytes.len() < n {
            return Err("a pgoutput message ends early".into());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn i16(&mut self) -> Result<i16, String> {
        Ok(i16::from_be_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    fn i32(&mut self) -> Result<i32, String> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    /// A NUL-terminated string.
    fn string(&mut self) -> Result<&'a [u8], String> {
        let end = self.bytes.iter().position(|b| *b == 0).ok_or("a pgoutput string has no end")?;
        let s = self.take(end)?;
        self.take(1)?;
        Ok(s)
    }
}

impl Relations {
    /// The tenant of `message` when it is an Insert into a relation with a `tenant_id` column
    /// (a Relation message is remembered; every other message is passed over). Errors: a
    /// message that is not what pgoutput sends.
    pub fn tenant(&mut self, message: &[u8]) -> Result<Option<String>, String> {
        let mut r = Reader { bytes: message };
        match r.u8()? {
            b'R' => {
                let oid = r.u32()?;
                r.string()?; // namespace
                r.string()?; // name
                r.u8()?; // replica identity
                let columns = r.i16()?;
                let mut at = None;
                for i in 0..usize::try_from(columns).map_err(|_| "a negative column count")? {
                    r.u8()?; // flags
                    if r.string()? == b"tenant_id" {
                        at = Some(i);
                    }
                    r.u32()?; // type
                    r.i32()?; // type modifier
                }
                self.tenant_column.insert(oid, at);
                Ok(None)
            }
            b'I' => {
                let oid = r.u32()?;
                let Some(at) = self.tenant_column.get(&oid).copied().flatten() else { return Ok(None) };
                if r.u8()? != b'N' {
                    return Err("an Insert message without its new row".into());
                }
                let columns = usize::try_from(r.i16()?).map_err(|_| "a negative column count")?;
                for i in 0..columns {
                    match r.u8()? {
                        b'n' | b'u' => {
                            if i == at {
                                return Ok(None);
                            }
                        }
                        b't' | b'b' => {
                            let len = usize::try_from(r.i32()?).map_err(|_| "a negative length")?;
                            let value = r.take(len)?;
                            if i == at {
                                return String::from_utf8(value.to_vec()).map(Some).map_err(|e| e.to_string());
                            }
                        }
                        other => return Err(format!("an unknown column kind {other:#x} in an Insert message")),
                    }
                }
                Ok(None)
            }
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relation(oid: u32, columns: &[&str]) -> Vec<u8> {
        let mut m = vec![b'R'];
        m.extend(oid.to_be_bytes());
        m.extend(b"todo\0events\0d");
        m.extend((columns.len() as i16).to_be_bytes());
        for c in columns {
            m.push(1);
            m.extend(c.as_bytes());
            m.push(0);
            m.extend(25u32.to_be_bytes());
            m.extend((-1i32).to_be_bytes());
        }
        m
    }

    fn insert(oid: u32, values: &[Option<&str>]) -> Vec<u8> {
        let mut m = vec![b'I'];
        m.extend(oid.to_be_bytes());
        m.push(b'N');
        m.extend((values.len() as i16).to_be_bytes());
        for v in values {
            match v {
                None => m.push(b'n'),
                Some(v) => {
                    m.push(b't');
                    m.extend((v.len() as i32).to_be_bytes());
                    m.extend(v.as_bytes());
                }
            }
        }
        m
    }

    #[test]
    fn the_tenant_of_each_insert() {
        let mut r = Relations::default();
        assert_eq!(r.tenant(b"B\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0").unwrap(), None);
        // an insert into a relation not described yet is passed over
        assert_eq!(r.tenant(&insert(7, &[Some("acme")])).unwrap(), None);
        assert_eq!(r.tenant(&relation(7, &["todo_id", "tenant_id", "action"])).unwrap(), None);
        assert_eq!(r.tenant(&insert(7, &[Some("12"), Some("acme"), Some("insert")])).unwrap(), Some("acme".into()));
        assert_eq!(r.tenant(&insert(7, &[None, Some("globex"), None])).unwrap(), Some("globex".into()));
        assert_eq!(r.tenant(&insert(7, &[Some("1"), None])).unwrap(), None);
        // a relation without the column: its rows name no tenant
        r.tenant(&relation(8, &["id"])).unwrap();
        assert_eq!(r.tenant(&insert(8, &[Some("acme")])).unwrap(), None);
    }

    #[test]
    fn a_malformed_message_is_an_error_not_a_panic() {
        let mut r = Relations::default();
        r.tenant(&relation(7, &["tenant_id"])).unwrap();
        let whole = insert(7, &[Some("acme")]);
        for end in 1..whole.len() {
            assert!(r.tenant(&whole[..end]).is_err(), "{end}");
        }
        assert!(r.tenant(b"R\0\0").is_err());
        let mut bad = insert(7, &[Some("acme")]);
        bad[6 + 2] = b'x';
        assert!(r.tenant(&bad).is_err());
    }
}
