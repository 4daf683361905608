//! The pairing's storage: its tables, the rows each storing [`Effect`] writes, and how they are
//! read back as a [`Stored`] when the object wakes. The SQL text and the row shapes are facts
//! of the core; the object only runs the statements named here through [`Sql`].

use serde_json::Value;
use tabrelay_bundle::fields::{json_text, Encode, FromValue};

use crate::pairing::room::{Effect, Stated, Stored};
use crate::pairing::tabs::Tab;
pub use crate::sql::{Bind, Rows, Sql};

/// The pairing's tables, by name. They are made on the object's first write, not when it
/// starts, so an object that is only asked about what it never stored (a revocation or refresh
/// of an unknown grant) stores nothing; a read of a table not made yet fails, which reads as
/// nothing stored.
pub const TABLES: [(&str, &str); 6] = [
    ("meta", "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)"),
    ("grants", "CREATE TABLE IF NOT EXISTS grants (id TEXT PRIMARY KEY, body TEXT NOT NULL)"),
    // What each tab stated (its tool list, its dataset's name), by tab number: too large for a
    // socket attachment, and it must survive hibernation.
    (
        "tab_state",
        "CREATE TABLE IF NOT EXISTS tab_state (tab TEXT PRIMARY KEY, tools TEXT, dataset TEXT)",
    ),
    // The requestStates that came back (each may once), until they expire.
    (
        "used_states",
        "CREATE TABLE IF NOT EXISTS used_states (key TEXT PRIMARY KEY, expires INTEGER NOT NULL)",
    ),
    // Grant ids revoked because their authorization code was replayed, until `until`: a grant
    // the first redemption creates after the replay's revocation reached the pairing is refused.
    (
        "replayed",
        "CREATE TABLE IF NOT EXISTS replayed (id TEXT PRIMARY KEY, until INTEGER NOT NULL)",
    ),
    // The tasks clients poll (io.modelcontextprotocol/tasks), each as its JSON, until its time
    // to live passes (the room deletes it then).
    ("tasks", "CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, body TEXT NOT NULL)"),
];

/// The pairing's storage, as one instance of its object sees it.
#[derive(Debug, Default)]
pub struct Store {
    /// Whether [`TABLES`] were made (or found made) by this instance.
    made: bool,
}

impl Store {
    /// Writes what a storing effect says (at `now_ms`, when it happened); false when the effect
    /// stores nothing (the object carries it out otherwise).
    pub fn apply(&mut self, sql: &mut dyn Sql, effect: &Effect, now_ms: u64) -> bool {
        let text = |s: &str| Bind::Text(s.to_owned());
        // A tab's number as its decimal digits, written as the codec writes a number (not by
        // `to_string`, whose formatting machinery nothing else in the Worker needs).
        let number = |tab: &u64| Bind::Text(json_text(tab));
        match effect {
            Effect::StoreStated(tab, stated) => {
                let (query, value) = match stated {
                    Stated::Tools(json) => ("INSERT INTO tab_state (tab, tools) VALUES (?1, ?2) ON CONFLICT(tab) DO UPDATE SET tools = ?2", json),
                    Stated::Dataset(name) => ("INSERT INTO tab_state (tab, dataset) VALUES (?1, ?2) ON CONFLICT(tab) DO UPDATE SET dataset = ?2", name),
                };
                self.write(sql, query, vec![number(tab), text(value)]);
            }
            Effect::ForgetStated(tab) => {
                let query = "DELETE FROM tab_state WHERE tab = ?";
                self.write(sql, query, vec![number(tab)]);
            }
            Effect::StoreTurns(turns) => self.meta(sql, "turns", turns),
            Effect::StoreLeft(left) => self.meta(sql, "left", left),
            Effect::StoreWrongCodes(wrong) => self.meta(sql, "wrong_codes", wrong),
            Effect::StorePresence(held) => self.meta(sql, "presence", held),
            Effect::StoreGrant(grant) => {
                let query = "INSERT INTO grants (id, body) VALUES (?1, ?2) ON CONFLICT(id) DO UPDATE SET body = ?2";
                self.body(sql, query, &grant.id, grant);
            }
            Effect::StoreTask(task) => {
                let query = "INSERT INTO tasks (id, body) VALUES (?1, ?2) ON CONFLICT(id) DO UPDATE SET body = ?2";
                self.body(sql, query, &task.id, task);
            }
            Effect::DeleteTask(id) => {
                self.write(sql, "DELETE FROM tasks WHERE id = ?", vec![text(id)])
            }
            Effect::DeleteGrant(id) => {
                self.write(sql, "DELETE FROM grants WHERE id = ?", vec![text(id)]);
            }
            Effect::RecordReplayed(id, until) => {
                let now = Bind::Int(now_ms as i64);
                self.write(sql, "DELETE FROM replayed WHERE until <= ?", vec![now]);
                let query = "INSERT OR REPLACE INTO replayed (id, until) VALUES (?, ?)";
                self.write(sql, query, vec![text(id), Bind::Int(*until as i64)]);
            }
            Effect::ForgetAll => {
                // Every table the object made goes; the next write makes them again.
                for (name, _) in TABLES {
                    let _ = sql.exec(&format!("DROP TABLE IF EXISTS {name}"), Vec::new());
                }
                self.made = false;
            }
            _ => return false,
        }
        true
    }

    /// What storage holds, read back when the object wakes, with the `tabs` its sockets kept.
    /// A row that does not read is skipped; a table not made yet reads as no rows.
    pub fn read_back(&self, sql: &mut dyn Sql, tabs: Vec<Tab>) -> Stored {
        let mut read = |query: &str| sql.exec(query, Vec::new()).unwrap_or_default();
        // Each kind of row in a loop of its own (smaller in the Worker than a collect of each).
        let mut stated = Vec::new();
        for mut row in read("SELECT tab, tools, dataset FROM tab_state ORDER BY tab") {
            let dataset = row.pop().flatten();
            let tools = row.pop().flatten();
            if let Some(tab) = row.pop().flatten().and_then(|t| t.parse().ok()) {
                stated.push((tab, tools, dataset));
            }
        }
        let meta = read("SELECT k, v FROM meta");
        let mut grants = Vec::new();
        for body in &column(read("SELECT body FROM grants ORDER BY rowid")) {
            if let Some(grant) = json(body).and_then(FromValue::from_value) {
                grants.push(grant);
            }
        }
        let mut tasks = Vec::new();
        for body in &column(read("SELECT body FROM tasks ORDER BY rowid")) {
            if let Some(task) = json(body).and_then(crate::pairing::tasks::read) {
                tasks.push(task);
            }
        }
        let mut replayed_until = 0;
        for &until in &until(read("SELECT CAST(until AS TEXT) FROM replayed")) {
            replayed_until = replayed_until.max(until);
        }
        // Each read as JSON first, then as its type: one parse for all (not one per type).
        let meta = |key: &str| meta_text(&meta, key).and_then(|t| json(t));
        Stored {
            tabs,
            stated,
            grants,
            turns: meta("turns").and_then(FromValue::from_value).unwrap_or_default(),
            left: meta("left").and_then(FromValue::from_value).unwrap_or_default(),
            wrong_codes: meta("wrong_codes").and_then(FromValue::from_value).unwrap_or_default(),
            tasks,
            replayed_until,
            presence: meta("presence").and_then(FromValue::from_value),
        }
    }

    /// Whether a requestState (by its key) comes back for the first time; it is kept as used
    /// until it expires (a uniqueness storage keeps). Expired ones are dropped first.
    pub fn first_use(
        &mut self,
        sql: &mut dyn Sql,
        key: &str,
        expires_ms: u64,
        now_ms: u64,
    ) -> bool {
        let now = Bind::Int(now_ms as i64);
        self.write(sql, "DELETE FROM used_states WHERE expires < ?", vec![now]);
        if !self.made {
            return false;
        }
        let query = "INSERT INTO used_states (key, expires) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING key";
        let inserted =
            sql.exec(query, vec![Bind::Text(key.to_owned()), Bind::Int(expires_ms as i64)]);
        inserted.is_ok_and(|rows| rows.len() == 1)
    }

    /// The replays recorded for grant `id`: until when each is kept.
    pub fn replayed(&self, sql: &mut dyn Sql, id: &str) -> Vec<u64> {
        let query = "SELECT CAST(until AS TEXT) FROM replayed WHERE id = ?";
        until(sql.exec(query, vec![Bind::Text(id.to_owned())]).unwrap_or_default())
    }

    /// Runs a write, the tables made first if this instance has not yet: every write goes
    /// through here, so the tables come with the first write and never before.
    fn write(&mut self, sql: &mut dyn Sql, query: &str, bindings: Vec<Bind>) {
        if !self.made {
            if TABLES.iter().any(|(_, create)| sql.exec(create, Vec::new()).is_err()) {
                return;
            }
            self.made = true;
        }
        // A failed write is the runtime's failure; the next read back shows what was kept.
        let _ = sql.exec(query, bindings);
    }

    fn meta(&mut self, sql: &mut dyn Sql, key: &str, json: &str) {
        let query = "INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)";
        self.write(sql, query, vec![Bind::Text(key.to_owned()), Bind::Text(json.to_owned())]);
    }

    /// Stores a row (a grant, a task): its id and its body as JSON.
    fn body(&mut self, sql: &mut dyn Sql, query: &str, id: &str, value: &dyn Encode) {
        let body = json_text(value);
        self.write(sql, query, vec![Bind::Text(id.to_owned()), Bind::Text(body)]);
    }
}

/// The first column of each row, where it is not NULL (a loop: smaller in the Worker than an
/// iterator adapter).
fn column(rows: Rows) -> Vec<String> {
    let mut column = Vec::new();
    for row in rows {
        if let Some(Some(value)) = row.into_iter().next() {
            column.push(value);
        }
    }
    column
}

fn json(text: &str) -> Option<Value> {
    serde_json::from_slice(text.as_bytes()).ok()
}

/// The times a query selected as text.
fn until(rows: Rows) -> Vec<u64> {
    let mut times = Vec::new();
    for text in &column(rows) {
        if let Ok(time) = text.parse() {
            times.push(time);
        }
    }
    times
}

/// The text of `key` among the meta rows (None: none). Not generic: one copy whatever it
/// reads as.
fn meta_text<'a>(rows: &'a Rows, key: &str) -> Option<&'a String> {
    rows.iter().find_map(|row| match &row[..] {
        [Some(k), Some(v)] if k == key => Some(v),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairing::codes::WrongCodes;
    use crate::pairing::turns::Turns;
    use crate::sql::testing::Recorded;

    fn text(s: &str) -> Bind {
        Bind::Text(s.to_owned())
    }

    #[test]
    fn the_tables_come_with_the_first_write_and_once() {
        let (mut store, mut sql) = (Store::default(), Recorded::default());
        assert!(store.apply(&mut sql, &Effect::ForgetStated(3), 0));
        assert!(store.apply(&mut sql, &Effect::DeleteTask("t".into()), 0));
        let creates = sql.queries().iter().filter(|q| q.starts_with("CREATE")).count();
        assert_eq!(creates, TABLES.len());
        assert_eq!(
            sql.run[TABLES.len()],
            ("DELETE FROM tab_state WHERE tab = ?".into(), vec![text("3")])
        );
        assert_eq!(
            sql.run.last().unwrap(),
            &("DELETE FROM tasks WHERE id = ?".into(), vec![text("t")])
        );
    }

    #[test]
    fn a_tabs_number_is_stored_as_its_decimal_digits() {
        let (mut store, mut sql) = (Store::default(), Recorded::default());
        for tab in [0, 7, 10, 1_806_896_332_800_001, u64::MAX] {
            store.apply(&mut sql, &Effect::ForgetStated(tab), 0);
            assert_eq!(sql.run.last().unwrap().1, [text(&tab.to_string())]);
        }
    }

    #[test]
    fn what_is_not_stored_touches_nothing() {
        let (mut store, mut sql) = (Store::default(), Recorded::default());
        assert!(!store.apply(&mut sql, &Effect::SetAlarm(5), 0));
        assert!(!store.apply(&mut sql, &Effect::Close(1, 1000, "x"), 0));
        assert!(sql.run.is_empty());
    }

    #[test]
    fn a_write_whose_tables_cannot_be_made_is_not_run() {
        let mut store = Store::default();
        let mut sql =
            Recorded { fails: vec!["CREATE TABLE IF NOT EXISTS grants"], ..Recorded::default() };
        store.apply(&mut sql, &Effect::DeleteGrant("g".into()), 0);
        assert!(!sql.queries().iter().any(|q| q.starts_with("DELETE")));
        // The next write tries again.
        sql.fails.clear();
        store.apply(&mut sql, &Effect::DeleteGrant("g".into()), 0);
        assert_eq!(sql.queries().last(), Some(&"DELETE FROM grants WHERE id = ?"));
    }

    #[test]
    fn forgetting_all_drops_every_table_and_the_next_write_makes_them_again() {
        let (mut store, mut sql) = (Store::default(), Recorded::default());
        store.apply(&mut sql, &Effect::StoreStated(1, Stated::Dataset("d".into())), 0);
        assert!(store.apply(&mut sql, &Effect::ForgetAll, 0));
        let drops: Vec<&str> =
            sql.queries().into_iter().filter(|q| q.starts_with("DROP")).collect();
        let names: Vec<String> =
            TABLES.iter().map(|(n, _)| format!("DROP TABLE IF EXISTS {n}")).collect();
        assert_eq!(drops, names);
        sql.run.clear();
        store.apply(&mut sql, &Effect::StoreStated(1, Stated::Tools("[]".into())), 0);
        assert_eq!(sql.run.len(), TABLES.len() + 1);
        let (query, bindings) = sql.run.last().unwrap();
        assert!(query.starts_with("INSERT INTO tab_state (tab, tools)"));
        assert_eq!(bindings, &[text("1"), text("[]")]);
    }

    #[test]
    fn a_replayed_record_drops_the_expired_ones_first() {
        let (mut store, mut sql) = (Store::default(), Recorded::default());
        store.apply(&mut sql, &Effect::RecordReplayed("g".into(), 900), 100);
        let tail = &sql.run[TABLES.len()..];
        assert_eq!(tail[0], ("DELETE FROM replayed WHERE until <= ?".into(), vec![Bind::Int(100)]));
        assert_eq!(
            tail[1],
            (
                "INSERT OR REPLACE INTO replayed (id, until) VALUES (?, ?)".into(),
                vec![text("g"), Bind::Int(900)]
            )
        );
    }

    #[test]
    fn meta_rows_are_the_values_as_json() {
        let (mut store, mut sql) = (Store::default(), Recorded::default());
        store.apply(&mut sql, &Effect::StoreTurns(json_text(&Turns::default())), 0);
        store.apply(&mut sql, &Effect::StoreWrongCodes(json_text(&WrongCodes::default())), 0);
        let metas: Vec<&Vec<Bind>> =
            sql.run.iter().filter(|(q, _)| q.contains("INTO meta")).map(|(_, b)| b).collect();
        let turns = tabrelay_bundle::fields::json_text(&Turns::default());
        let wrong = tabrelay_bundle::fields::json_text(&WrongCodes::default());
        assert_eq!(
            metas,
            [
                &vec![text("turns"), Bind::Text(turns)],
                &vec![text("wrong_codes"), Bind::Text(wrong)]
            ]
        );
    }

    #[test]
    fn what_was_stored_reads_back_and_what_does_not_read_is_skipped() {
        let turns = tabrelay_bundle::fields::json_text(&Turns::default());
        let mut sql = Recorded {
            rows: vec![
                (
                    "SELECT tab, tools, dataset FROM tab_state ORDER BY tab",
                    vec![
                        vec![Some("2".into()), Some("[]".into()), None],
                        vec![Some("x".into()), None, Some("d".into())],
                        vec![Some("5".into()), None, Some("d".into())],
                    ],
                ),
                (
                    "SELECT k, v FROM meta",
                    vec![
                        vec![Some("left".into()), Some("not json".into())],
                        vec![Some("turns".into()), Some(turns)],
                    ],
                ),
                (
                    "SELECT body FROM grants ORDER BY rowid",
                    vec![vec![Some("{}".into())], vec![None]],
                ),
                (
                    "SELECT CAST(until AS TEXT) FROM replayed",
                    vec![vec![Some("40".into())], vec![Some("70".into())], vec![Some("x".into())]],
                ),
            ],
            ..Recorded::default()
        };
        let stored = Store::default().read_back(&mut sql, Vec::new());
        assert_eq!(stored.stated, [(2, Some("[]".into()), None), (5, None, Some("d".into()))]);
        assert_eq!(stored.replayed_until, 70);
        assert!(stored.grants.is_empty() && stored.tasks.is_empty());
        assert_eq!(stored.turns, Turns::default());
        // Reads only: nothing is made by a wake.
        assert!(sql.queries().iter().all(|q| q.starts_with("SELECT")));
    }

    #[test]
    fn a_store_never_written_reads_back_as_nothing() {
        let mut sql = Recorded { fails: vec!["FROM"], ..Recorded::default() };
        assert_eq!(Store::default().read_back(&mut sql, Vec::new()), Stored::default());
    }

    #[test]
    fn a_request_state_is_first_once_and_its_expired_ones_go_first() {
        let mut store = Store::default();
        let inserted = "INSERT INTO used_states (key, expires) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING key";
        let mut sql = Recorded {
            rows: vec![(inserted, vec![vec![Some("k".into())]])],
            ..Recorded::default()
        };
        assert!(store.first_use(&mut sql, "k", 500, 100));
        let tail = &sql.run[TABLES.len()..];
        assert_eq!(
            tail[0],
            ("DELETE FROM used_states WHERE expires < ?".into(), vec![Bind::Int(100)])
        );
        assert_eq!(tail[1], (inserted.into(), vec![text("k"), Bind::Int(500)]));
        // Storage said no row was inserted: it came back before.
        sql.rows.clear();
        assert!(!store.first_use(&mut sql, "k", 500, 100));
        // Storage that cannot be written never says first.
        let rows = vec![(inserted, vec![vec![Some("k".into())]])];
        let mut broken = Recorded { fails: vec!["CREATE"], rows, ..Recorded::default() };
        assert!(!Store::default().first_use(&mut broken, "k", 500, 100));
    }

    #[test]
    fn a_grants_replays_are_read_by_its_exact_id() {
        let query = "SELECT CAST(until AS TEXT) FROM replayed WHERE id = ?";
        let mut sql =
            Recorded { rows: vec![(query, vec![vec![Some("9".into())]])], ..Recorded::default() };
        assert_eq!(Store::default().replayed(&mut sql, "g_1"), [9]);
        assert_eq!(sql.run, [(query.to_owned(), vec![text("g_1")])]);
    }

    #[test]
    fn what_each_effect_writes_reads_back_as_it_was() {
        let requester = crate::oauth::connect::Requester {
            client_name: "Claude".into(),
            host: "claude.ai".into(),
            place: None,
            verified: None,
        };
        let mut rng = crate::crypto::testing::Counter(9);
        let grant =
            crate::pairing::grants::Grant::new("g1".into(), "cid".into(), requester, 5, &mut rng).0;
        let (mut store, mut sql) = (Store::default(), Recorded::default());
        let effects = [
            Effect::StoreGrant(grant.clone()),
            Effect::StoreTurns(json_text(&Turns::default())),
            Effect::StoreWrongCodes(json_text(&WrongCodes::default())),
            Effect::StoreStated(4, Stated::Dataset("d".into())),
        ];
        for effect in &effects {
            store.apply(&mut sql, effect, 0);
        }
        // The rows as a table would hold them: each write's bindings, in its columns' order.
        let bound = |prefix: &str| -> Rows {
            let rows = sql.run.iter().filter(|(q, _)| q.starts_with(prefix));
            let text = |b: &Bind| match b {
                Bind::Text(t) => Some(t.clone()),
                Bind::Int(n) => Some(n.to_string()),
            };
            rows.map(|(_, b)| b.iter().map(text).collect()).collect()
        };
        let stated: Rows = bound("INSERT INTO tab_state")
            .into_iter()
            .map(|mut r| {
                r.insert(1, None);
                r
            })
            .collect();
        let (grants, meta) = (
            bound("INSERT INTO grants").into_iter().map(|r| vec![r[1].clone()]).collect(),
            bound("INSERT OR REPLACE INTO meta"),
        );
        let mut tables = Recorded {
            rows: vec![
                ("SELECT tab, tools, dataset FROM tab_state ORDER BY tab", stated),
                ("SELECT body FROM grants ORDER BY rowid", grants),
                ("SELECT k, v FROM meta", meta),
            ],
            ..Recorded::default()
        };
        let stored = Store::default().read_back(&mut tables, Vec::new());
        assert_eq!(stored.grants, [grant]);
        assert_eq!(stored.stated, [(4, None, Some("d".into()))]);
        assert_eq!((stored.turns, stored.wrong_codes), (Turns::default(), WrongCodes::default()));
    }
}
