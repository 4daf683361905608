//! The SQL storage of a Durable Object as the core reaches it: one synchronous call that runs a
//! statement the core names (the runtime's SQLite is synchronous, as quinn's `TokenStore` is),
//! so which rows are written and how they read back are decided and tested natively.

/// A value bound to a statement's `?`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bind {
    /// Text.
    Text(String),
    /// An integer (times, in milliseconds).
    Int(i64),
}

/// The rows a statement selected, each its columns' values in order as text (None: NULL, or
/// not text: a query selects a number `CAST(… AS TEXT)`).
pub type Rows = Vec<Vec<Option<String>>>;

/// A statement failed (a read of a table not made yet, say, or the runtime's failure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failed;

/// The SQL storage of a Durable Object (a pairing's, a connect code's).
pub trait Sql {
    /// Runs one statement: the rows it selected.
    ///
    /// # Errors
    /// [`Failed`]: it failed.
    fn exec(&mut self, query: &str, bindings: Vec<Bind>) -> Result<Rows, Failed>;
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A recording of the statements run, answering reads from canned rows (by the query's
    /// text), and failing what `fails` names.
    #[derive(Default)]
    pub(crate) struct Recorded {
        pub run: Vec<(String, Vec<Bind>)>,
        pub rows: Vec<(&'static str, Rows)>,
        pub fails: Vec<&'static str>,
    }

    impl Sql for Recorded {
        fn exec(&mut self, query: &str, bindings: Vec<Bind>) -> Result<Rows, Failed> {
            self.run.push((query.to_owned(), bindings));
            if self.fails.iter().any(|f| query.contains(f)) {
                return Err(Failed);
            }
            Ok(self
                .rows
                .iter()
                .find(|(q, _)| *q == query)
                .map(|(_, r)| r.clone())
                .unwrap_or_default())
        }
    }

    impl Recorded {
        pub fn queries(&self) -> Vec<&str> {
            self.run.iter().map(|(q, _)| q.as_str()).collect()
        }
    }
}
