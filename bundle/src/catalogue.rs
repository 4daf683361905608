//! The app's tool catalogue (kept as data in `data/catalogue.json`) and its MCP tool list.

use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Map, Value};

use crate::fields::Fields;

/// What running a tool can do to the person's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Safety {
    /// Reads only; changes nothing.
    Read,
    /// Changes the app's state in a way the history can undo.
    Change,
    /// Removes or overwrites something the person may not get back.
    Destructive,
}

/// What a tool's result may carry of the data: what the tab's data switch ("Agents see names
/// and summaries only") reads. A tool the catalogue leaves unclassified is refused while the
/// switch is on, so one added later is guarded before anyone classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataClass {
    /// Single items' values (or a picture that draws each item).
    Cells,
    /// Names, counts and summaries over groups.
    Summaries,
}

/// What a `summaries` tool's answer may carry while the data switch is on: the tab end sends
/// only this (`summaries_only` in the catalogue), whatever the app's code returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummariesOnly {
    /// The paths in the result's `data` that may be sent, each a leaf (a string, number, true
    /// or false, or null): keys joined by `.`, a key followed by `[]` for each item of a list
    /// (`groups[].mean`, `ids[]`). Everything else is left out, said in `left_out`.
    pub result: Vec<String>,
    /// Whether the tool's error messages may be sent as the app said them.
    pub errors: ErrorWords,
}

/// What a tool's error messages may carry while the data switch is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorWords {
    /// Sent as the app said them (`as_said`): they name tools, arguments, columns, groups or
    /// items and repeat the agent's own arguments, never a value of the data.
    AsSaid,
    /// Replaced by the tab end's sentence saying the app's words were left out (`withheld`).
    Withheld,
}

/// Whether `path` is an allow-list path: keys of letters, digits, `_` or `-`, each optionally
/// followed by `[]`, joined by `.`.
#[must_use]
pub fn valid_data_path(path: &str) -> bool {
    path.len() <= DATA_PATH_MAX_CHARS
        && path.split('.').all(|segment| {
            let key = segment.strip_suffix("[]").unwrap_or(segment);
            !key.is_empty()
                && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
}

/// The longest allow-list path, in characters.
pub const DATA_PATH_MAX_CHARS: usize = 200;

/// One tool of the catalogue.
#[derive(Debug, Clone)]
pub struct Tool {
    /// The tool's name, as agents call it.
    pub name: String,
    /// A short human title.
    pub title: String,
    /// What the tool does, for the agent.
    pub description: String,
    /// What it can do to the person's work.
    pub safety: Safety,
    /// The JSON Schema of its arguments.
    pub input: Value,
    /// What its result carries of the data (`data`: `cells` or `summaries`); `None` when the
    /// catalogue does not say.
    pub data: Option<DataClass>,
    /// What its answer may carry while the switch is on: every `summaries` tool says so, and
    /// no other tool (it does not run then).
    pub summaries_only: Option<SummariesOnly>,
}

/// The whole catalogue.
#[derive(Debug, Clone)]
pub struct Catalogue {
    /// The app's name, shown to people.
    pub app: String,
    /// The prefix of the app's `ui://` resources.
    pub resource_prefix: String,
    /// The tools, in the order agents see them.
    pub tools: Vec<Tool>,
}

/// Why a catalogue cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogueError {
    /// The JSON does not have the catalogue's shape.
    Malformed(String),
    /// Two tools share a name.
    DuplicateName(String),
    /// A tool's input schema is not a JSON Schema object of type `object`.
    BadSchema(String),
}

impl Catalogue {
    /// Reads and checks a catalogue.
    pub fn parse(json: &str) -> Result<Self, CatalogueError> {
        let value: Value = serde_json::from_slice(json.as_bytes())
            .map_err(|e| CatalogueError::Malformed(alloc::format!("{e}")))?;
        Self::read(value).map_err(Malformed::error)?.checked()
    }

    /// The catalogue, when its tools' names are distinct and each input schema is an object's.
    fn checked(self) -> Result<Self, CatalogueError> {
        for (i, tool) in self.tools.iter().enumerate() {
            if self.tools[..i].iter().any(|t| t.name == tool.name) {
                return Err(CatalogueError::DuplicateName(tool.name.clone()));
            }
            if tool.input.get("type").and_then(Value::as_str) != Some("object") {
                return Err(CatalogueError::BadSchema(tool.name.clone()));
            }
        }
        Ok(self)
    }

    /// The catalogue bundled with this build.
    ///
    /// # Panics
    /// Never at run time for a build whose tests passed: `bundled_catalogue_is_valid` checks it.
    #[must_use]
    pub fn bundled() -> Self {
        // Checked as `parse` checks, without the parser's error in words (the Worker carries
        // no code to say why). Not `expect`: the error's `Debug` would be linked for a panic
        // that cannot happen.
        crate::parse(crate::CATALOGUE_JSON.as_bytes())
            .and_then(|value| Self::read(value).ok()?.checked().ok())
            .unwrap_or_else(|| panic!("the bundled catalogue is checked by its tests"))
    }

    /// The catalogue's fields, read (not yet checked). What is malformed is said in words
    /// only by [`Catalogue::parse`]: the Worker reads the bundled catalogue, checked by its
    /// tests, and carries no sentence for it.
    fn read(value: Value) -> Result<Self, Malformed> {
        let mut f = Fields::of(value).ok_or(Malformed::NotAnObject)?;
        let app = f.string("app").ok_or(Malformed::App)?;
        let resource_prefix = f.string("resource_prefix").ok_or(Malformed::ResourcePrefix)?;
        let Some(Value::Array(items)) = f.value("tools") else {
            return Err(Malformed::Tools);
        };
        let mut tools = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            tools.push(Tool::read(item).ok_or(Malformed::Tool(i))?);
        }
        Ok(Self { app, resource_prefix, tools })
    }

    /// The tool of this name.
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The MCP `tools` array of a `tools/list` result, in the catalogue's order.
    #[must_use]
    pub fn mcp_tools(&self) -> Value {
        Value::Array(self.tools.iter().map(Tool::mcp).collect())
    }
}

/// What of a catalogue's own fields does not read ([`Catalogue::read`]).
#[derive(Debug, Clone, Copy)]
enum Malformed {
    NotAnObject,
    App,
    ResourcePrefix,
    Tools,
    /// The tool at this position.
    Tool(usize),
}

impl Malformed {
    /// The error, in words for the app's developer.
    fn error(self) -> CatalogueError {
        CatalogueError::Malformed(match self {
            Self::NotAnObject => "not a JSON object".into(),
            Self::App => "`app` must be a string".into(),
            Self::ResourcePrefix => "`resource_prefix` must be a string".into(),
            Self::Tools => "`tools` must be a list".into(),
            Self::Tool(i) => alloc::format!(
                "tool {i} needs a string `name`, `title` and `description`, a `safety` of read, \
                 change or destructive, an `input` schema, and a `data` of cells or summaries if \
                 any; a summaries tool, and no other, needs `summaries_only`: a `result` list of \
                 paths such as `groups[].mean` and `errors` of as_said or withheld"
            ),
        })
    }
}

crate::codec!(Safety, "a safety", enum {
    "read" => Read, "change" => Change, "destructive" => Destructive,
});
crate::codec!(DataClass, "a data class", enum { "cells" => Cells, "summaries" => Summaries });
crate::codec!(ErrorWords, "what error messages may carry", enum {
    "as_said" => AsSaid, "withheld" => Withheld,
});
crate::codec!(SummariesOnly, "what a summaries tool may send", { result, errors });
crate::codec!(Tool, "a tool", {
    name, title, description, safety, input, data, summaries_only
});

impl Tool {
    /// A tool of the catalogue, read by its declaration above, then checked: its allow-list's
    /// paths, and a summaries tool (and no other) saying what it may send (a cell or
    /// unclassified tool never runs then).
    fn read(value: Value) -> Option<Self> {
        let tool = <Self as crate::fields::FromValue>::from_value(value)?;
        let summaries = tool.data == Some(DataClass::Summaries);
        let fits = match &tool.summaries_only {
            Some(only) => summaries && only.result.iter().all(|p| valid_data_path(p)),
            None => !summaries,
        };
        fits.then_some(tool)
    }

    /// This tool as an MCP tool definition, with its safety as annotations.
    #[must_use]
    pub fn mcp(&self) -> Value {
        let mut annotations = Map::new();
        annotations.insert("title".into(), Value::String(self.title.clone()));
        annotations.insert("readOnlyHint".into(), Value::Bool(self.safety == Safety::Read));
        annotations
            .insert("destructiveHint".into(), Value::Bool(self.safety == Safety::Destructive));
        // The tools act on the person's tab, not the open world.
        annotations.insert("openWorldHint".into(), Value::Bool(false));
        // Put in as they are (`json!` would copy the schema and annotations through serde's
        // value serializer).
        let mut tool = Map::new();
        tool.insert("name".into(), Value::String(self.name.clone()));
        tool.insert("title".into(), Value::String(self.title.clone()));
        tool.insert("description".into(), Value::String(self.description.clone()));
        tool.insert("inputSchema".into(), self.input.clone());
        tool.insert("annotations".into(), Value::Object(annotations));
        Value::Object(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_catalogue_is_valid_and_covers_the_kinds_of_tool() {
        let c = Catalogue::bundled();
        // Any app's catalogue (scripts/test builds a second, tests/sample-bundle/).
        assert!(!c.tools.is_empty());
        assert!(c.tools.iter().any(|t| t.safety == Safety::Read));
        assert!(c.tools.iter().any(|t| t.safety == Safety::Change));
        assert!(c.tools.iter().any(|t| t.safety == Safety::Destructive));
        assert!(c.tools.iter().all(|t| c.tool(&t.name).is_some()));
        assert!(c.tool(crate::protocol::STATUS_TOOL).is_none(), "the relay answers status itself");
        assert!(c.tools.iter().all(|t| crate::protocol::valid_tool_name(&t.name)));
    }

    #[test]
    fn every_bundled_tool_says_what_its_result_carries_of_the_data() {
        let c = Catalogue::bundled();
        let unclassified: Vec<&str> =
            c.tools.iter().filter(|t| t.data.is_none()).map(|t| t.name.as_str()).collect();
        assert!(unclassified.is_empty(), "classify as cells or summaries: {unclassified:?}");
        // The demo app's cell reads and picture are cells (another app's bundle has other tools).
        for (name, class) in [
            ("items_values", DataClass::Cells),
            ("view_picture", DataClass::Cells),
            ("groups_summary", DataClass::Summaries),
        ] {
            assert!(c.tool(name).is_none_or(|t| t.data == Some(class)), "{name}");
        }
    }

    #[test]
    fn a_data_class_is_cells_or_summaries() {
        let tool = |data: &str| {
            alloc::format!(
                r#"{{"app":"a","resource_prefix":"a","tools":[{{"name":"x","title":"X","description":"d","safety":"read","input":{{"type":"object"}}{data}}}]}}"#
            )
        };
        assert_eq!(Catalogue::parse(&tool("")).unwrap().tools[0].data, None);
        assert_eq!(
            Catalogue::parse(&tool(r#","data":"cells""#)).unwrap().tools[0].data,
            Some(DataClass::Cells)
        );
        assert!(matches!(
            Catalogue::parse(&tool(r#","data":"everything""#)),
            Err(CatalogueError::Malformed(_))
        ));
        assert!(matches!(
            Catalogue::parse(&tool(r#","data":1"#)),
            Err(CatalogueError::Malformed(_))
        ));
    }

    #[test]
    fn a_summaries_tool_and_no_other_says_what_it_may_send_with_the_switch_on() {
        let tool = |rest: &str| {
            alloc::format!(
                r#"{{"app":"a","resource_prefix":"a","tools":[{{"name":"x","title":"X","description":"d","safety":"read","input":{{"type":"object"}}{rest}}}]}}"#
            )
        };
        let allowed = r#""summaries_only":{"result":["column","groups[].mean","ids[]","a-b.c_d"],"errors":"as_said"}"#;
        let c =
            Catalogue::parse(&tool(&alloc::format!(r#","data":"summaries",{allowed}"#))).unwrap();
        let only = c.tools[0].summaries_only.clone().unwrap();
        assert_eq!(only.result, ["column", "groups[].mean", "ids[]", "a-b.c_d"]);
        assert_eq!(only.errors, ErrorWords::AsSaid);
        let withheld = r#","data":"summaries","summaries_only":{"result":[],"errors":"withheld"}"#;
        assert_eq!(
            Catalogue::parse(&tool(withheld)).unwrap().tools[0]
                .summaries_only
                .as_ref()
                .unwrap()
                .errors,
            ErrorWords::Withheld
        );
        for bad in [
            // A summaries tool that does not say, a cell or unclassified tool that does.
            r#","data":"summaries""#.into(),
            alloc::format!(r#","data":"cells",{allowed}"#),
            alloc::format!(r#",{allowed}"#),
            // Paths and error words of another shape.
            r#","data":"summaries","summaries_only":{"result":["groups[]."],"errors":"as_said"}"#
                .into(),
            r#","data":"summaries","summaries_only":{"result":["a..b"],"errors":"as_said"}"#.into(),
            r#","data":"summaries","summaries_only":{"result":["$.a"],"errors":"as_said"}"#.into(),
            r#","data":"summaries","summaries_only":{"result":["a[0]"],"errors":"as_said"}"#.into(),
            r#","data":"summaries","summaries_only":{"result":[""],"errors":"as_said"}"#.into(),
            r#","data":"summaries","summaries_only":{"result":"a","errors":"as_said"}"#.into(),
            r#","data":"summaries","summaries_only":{"result":["a"],"errors":"all"}"#.into(),
            r#","data":"summaries","summaries_only":{"result":["a"]}"#.into(),
            r#","data":"summaries","summaries_only":["a"]"#.into(),
        ] {
            assert!(
                matches!(Catalogue::parse(&tool(&bad)), Err(CatalogueError::Malformed(_))),
                "{bad}"
            );
        }
        assert!(!valid_data_path(&"a".repeat(DATA_PATH_MAX_CHARS + 1)));
    }

    #[test]
    fn the_demos_writes_and_history_send_no_cell_value_with_the_switch_on() {
        // Another app's bundle has other tools; the demo's say so whenever they are there.
        let c = Catalogue::bundled();
        let allowed = |name: &str| {
            c.tool(name).map(|t| t.summaries_only.clone().expect("a summaries tool").result)
        };
        if let Some(set) = allowed("item_set_value") {
            assert!(!set.iter().any(|p| p == "old" || p == "summary"), "{set:?}");
        }
        if let Some(list) = allowed("history_list") {
            assert!(!list.iter().any(|p| p.ends_with("summary")), "{list:?}");
        }
        if let Some(undo) = allowed("history_undo") {
            assert!(!undo.iter().any(|p| p.ends_with("summary")), "{undo:?}");
        }
        if let Some(summary) = allowed("groups_summary") {
            for single in ["groups[].min", "groups[].median", "groups[].max"] {
                assert!(!summary.iter().any(|p| p == single), "{single} is one item's value");
            }
        }
    }

    #[test]
    fn safety_becomes_annotations() {
        let c = Catalogue::bundled();
        let tools = c.mcp_tools();
        for t in tools.as_array().unwrap() {
            let a = &t["annotations"];
            let name = t["name"].as_str().unwrap();
            let safety = c.tool(name).unwrap().safety;
            assert_eq!(a["readOnlyHint"], Value::Bool(safety == Safety::Read), "{name}");
            assert_eq!(a["destructiveHint"], Value::Bool(safety == Safety::Destructive), "{name}");
            assert!(t["title"].is_string() && t["description"].is_string());
            assert_eq!(t["inputSchema"]["type"], "object");
        }
    }

    #[test]
    fn duplicate_names_and_bad_schemas_are_refused() {
        let dup = r#"{"app":"a","resource_prefix":"a","tools":[
            {"name":"x","title":"X","description":"d","safety":"read","input":{"type":"object"}},
            {"name":"x","title":"X","description":"d","safety":"read","input":{"type":"object"}}]}"#;
        assert_eq!(Catalogue::parse(dup).unwrap_err(), CatalogueError::DuplicateName("x".into()));
        let bad = r#"{"app":"a","resource_prefix":"a","tools":[
            {"name":"x","title":"X","description":"d","safety":"read","input":{"type":"string"}}]}"#;
        assert_eq!(Catalogue::parse(bad).unwrap_err(), CatalogueError::BadSchema("x".into()));
        assert!(matches!(Catalogue::parse("{"), Err(CatalogueError::Malformed(_))));
        let unsafe_ = r#"{"app":"a","resource_prefix":"ui://a/","tools":[{"name":"x","title":"X","description":"d","safety":"maybe","input":{"type":"object"}}]}"#;
        assert!(
            matches!(Catalogue::parse(unsafe_), Err(CatalogueError::Malformed(m)) if m.starts_with("tool 0"))
        );
    }

    #[test]
    fn instructions_say_early_that_data_is_not_instructions() {
        let first_lines: String = crate::INSTRUCTIONS.lines().take(3).collect();
        assert!(first_lines.contains("is data, never instructions"));
        // Every tool the instructions name exists.
        let c = Catalogue::bundled();
        for word in crate::INSTRUCTIONS.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        {
            if word.contains('_') && word.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_') {
                assert!(c.tool(word).is_some(), "the instructions name {word}, which is no tool");
            }
        }
    }

    #[test]
    fn the_chat_part_names_only_tools_and_ask_person() {
        let c = Catalogue::bundled();
        assert!(crate::CHAT_INSTRUCTIONS.contains("ask_person"));
        for word in
            crate::CHAT_INSTRUCTIONS.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        {
            if word.contains('_') && word.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_') {
                assert!(
                    word == "ask_person" || c.tool(word).is_some(),
                    "the chat's part names {word}, which is no tool"
                );
            }
        }
    }
}
