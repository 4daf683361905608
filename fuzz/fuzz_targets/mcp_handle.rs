//! `mcp::handle` on any POST body, with or without the routing headers: the input's first
//! line (when it has one, and it is UTF-8) holds the headers `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and `Mcp-Session-Id` separated by tabs, the rest is the body. Checks that each reply
//! agrees with `jsonrpc::parse` and has the shape a client reads. The first line is also read
//! as a `Last-Event-ID` (a resumed stream's): what reads, reads back the same from the id the
//! relay would give that event.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tabrelay::jsonrpc::{self, ErrorCode, Id, Message};
use tabrelay::limits::{MAX_BATCH, MAX_BODY_BYTES};
use tabrelay::mcp::{self, Headers, Reply, ALL_VERSIONS, SESSION_VERSIONS};
use tabrelay_bundle::protocol::{valid_tool_name, STATUS_TOOL};

fuzz_target!(|data: &[u8]| {
    let (header, body) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (core::str::from_utf8(&data[..i]).ok(), &data[i + 1..]),
        None => (None, data),
    };
    let mut parts = header.unwrap_or_default().split('\t').map(Some);
    let headers = match header {
        None => Headers::default(),
        Some(_) => Headers {
            version: parts.next().flatten(),
            method: parts.next().flatten(),
            name: parts.next().flatten(),
            session: parts.next().flatten(),
            ..Headers::default()
        },
    };
    if let Some(last) = header.and_then(mcp::resume::read_event_id) {
        let mut ids = mcp::resume::EventIds::new(&last.id, last.progress.as_ref(), last.number);
        let framed = ids.frame("");
        let id = framed.lines().next().and_then(|l| l.strip_prefix("id: ")).unwrap();
        assert_eq!(mcp::resume::read_event_id(id), Some(last));
    }
    let header = headers.version;
    match mcp::batch(body, &headers) {
        mcp::Batch::One => {}
        mcp::Batch::Many(items) => {
            assert!(
                matches!(header.map(str::trim), None | Some("2025-03-26")),
                "a batch under {header:?}"
            );
            assert!((1..=MAX_BATCH).contains(&items.len()));
            for item in &items {
                assert!(serde_json::from_slice::<Value>(item).is_ok());
                let _ = mcp::handle(item, &headers, "https://app.example/");
            }
        }
        mcp::Batch::Refused(r) => assert_eq!(r["error"]["code"], -32600),
    }
    // An answer sent once the grant checks out reads as the 200 it becomes.
    let reply = match mcp::handle(body, &headers, "https://app.example/") {
        Reply::Granted(body) => Reply::Json { status: 200, body },
        other => other,
    };
    // The header line doubles as an `Accept` header.
    let _ = mcp::accepts_stream(header);
    let parsed = (body.len() <= MAX_BODY_BYTES).then(|| jsonrpc::parse(body));
    match reply {
        Reply::Accepted => match &parsed {
            Some(Ok(Message::Notification { method, params })) => {
                let cancels = params.get("requestId").and_then(Id::of).is_some();
                assert!(!(method == "notifications/cancelled" && cancels), "a cancel was dropped");
            }
            Some(Ok(Message::Response { id, .. })) => {
                assert!(!matches!(id, Id::Text(_)), "an answer to a question was dropped")
            }
            other => panic!("accepted {other:?}"),
        },
        Reply::Answer { id, answer } => {
            let Some(Ok(Message::Response { id: asked, answer: read })) = &parsed else {
                panic!("an answer from no response")
            };
            assert_eq!((asked, read), (&Id::Text(id), &answer));
        }
        Reply::Initialize { body: answer, declared, revision } => {
            let Some(Ok(Message::Request(r))) = &parsed else {
                panic!("initialize from no request")
            };
            assert_eq!(r.method, "initialize");
            assert_ne!(header.map(str::trim), Some(mcp::STATELESS_VERSION));
            assert_eq!(answer["id"], tabrelay_fuzz::id_value(Some(&r.id)));
            check_result("initialize", &answer["result"]);
            assert_eq!(answer["result"]["protocolVersion"], revision);
            // What the client declared, and the revision, read back from the session id.
            let keys = tabrelay::keys::Keys::new(&"k".repeat(32), None).unwrap();
            let id = mcp::session::issue(&keys, "g", declared, revision);
            let opened = mcp::session::Opened { declared, revision: Some(revision) };
            assert_eq!(mcp::session::verify(&keys, "g", &id), Some(opened));
        }
        Reply::Cancel { request_id } => {
            let Some(Ok(Message::Notification { method, params })) = &parsed else {
                panic!("a cancel from no notification")
            };
            assert_eq!(method, "notifications/cancelled");
            assert_eq!(params.get("requestId").and_then(Id::of), Some(request_id));
        }
        Reply::Listen { id, .. } => {
            let Some(Ok(Message::Request(r))) = parsed else { panic!("a listen from no request") };
            assert_eq!((&r.id, r.method.as_str()), (&id, "subscriptions/listen"));
            assert_eq!(header, Some(mcp::STATELESS_VERSION), "a listen outside 2026-07-28");
        }
        Reply::Task(mcp::tasks::TaskRequest { id, era, task, .. }) => {
            let Some(Ok(Message::Request(r))) = parsed else { panic!("a task from no request") };
            assert_eq!(r.id, id);
            assert!(r.method.starts_with("tasks/"), "{}", r.method);
            assert_eq!(r.params.get("taskId"), Some(&Value::from(task)));
            assert_eq!(
                era.is_stateless(),
                header.is_some_and(|v| v.trim() == mcp::STATELESS_VERSION)
            );
        }
        Reply::Call(mcp::exchange::call::ToolsCall {
            id,
            tool,
            args,
            progress_token,
            era,
            retry,
            tasks,
        }) => {
            if retry.is_some() {
                assert!(era.is_stateless(), "a retry outside 2026-07-28");
            }
            if let Some(t) = &tasks {
                // A 2026-07-28 task is the server's choice; a 2025-11-25 client asks for one.
                assert_eq!(t.at_once, !era.is_stateless());
            }
            let Some(Ok(Message::Request(r))) = parsed else { panic!("a call from no request") };
            assert_eq!((&r.id, r.method.as_str()), (&id, "tools/call"));
            assert!(valid_tool_name(&tool) && tool != STATUS_TOOL, "a call to {tool:?}");
            assert!(args.is_object());
            if let Some(v) = header {
                assert!(ALL_VERSIONS.contains(&v.trim()), "a call under an unsupported revision");
            }
            assert_eq!(
                era.is_stateless(),
                header.is_some_and(|v| v.trim() == mcp::STATELESS_VERSION)
            );
            if let Some(t) = &progress_token {
                assert!(t.is_string() || t.is_i64() || t.is_u64(), "progress token {t}");
                assert_eq!(r.params.get("_meta").and_then(|m| m.get("progressToken")), Some(t));
            }
        }
        Reply::ListTools { id, .. } | Reply::Status { id, .. } => {
            let Some(Ok(Message::Request(r))) = parsed else { panic!("a list from no request") };
            assert_eq!(r.id, id);
            match r.method.as_str() {
                "tools/list" => {}
                "tools/call" => assert_eq!(r.params.get("name"), Some(&Value::from(STATUS_TOOL))),
                other => panic!("the pairing asked for {other}"),
            }
            if let Some(v) = header {
                assert!(
                    ALL_VERSIONS.contains(&v.trim()),
                    "an answer under an unsupported revision"
                );
            }
        }
        Reply::Granted(_) => panic!("read as its 200 above"),
        Reply::Json { status, body: answer } => {
            assert!([200, 400, 404, 413].contains(&status), "status {status}");
            assert_eq!(answer["jsonrpc"], "2.0");
            // As a server-sent event the answer is one `data:` line, whatever it holds.
            let event = mcp::sse_event(&answer);
            assert!(event.starts_with("event: message\ndata: ") && event.ends_with("}\n\n"));
            assert_eq!(event.matches('\n').count(), 3, "a line break inside the data");
            let (result, error) = (answer.get("result"), answer.get("error"));
            assert!(result.is_some() != error.is_some(), "exactly one of result and error");
            match &parsed {
                None => assert_eq!(status, 413),
                Some(Err(bad)) => {
                    assert_eq!(status, 400);
                    assert_eq!(answer["error"]["code"], bad.error.code.0);
                }
                Some(Ok(Message::Request(r))) => {
                    assert_eq!(answer["id"], tabrelay_fuzz::id_value(Some(&r.id)));
                    let code = answer["error"]["code"].as_i64().unwrap_or(0);
                    if status == 400 {
                        // Only a revision's own rules refuse with 400: its headers and _meta.
                        assert!(
                            header.is_some_and(|v| !SESSION_VERSIONS.contains(&v.trim()))
                                || r.params.contains_key("_meta"),
                            "400 without headers"
                        );
                        assert!([-32020, -32022, -32602].contains(&code), "code {code}");
                    } else if status == 404 {
                        assert_eq!(code, ErrorCode::METHOD_NOT_FOUND.0 as i64);
                        assert_eq!(header.map(str::trim), Some(mcp::STATELESS_VERSION));
                    } else {
                        assert_eq!(status, 200);
                    }
                    if let Some(result) = result {
                        check_result(&r.method, result);
                        let stateless = header.is_some_and(|v| v.trim() == mcp::STATELESS_VERSION);
                        assert_eq!(
                            result.get("resultType").is_some(),
                            stateless && result.is_object()
                        );
                    } else {
                        let code = answer["error"]["code"].as_i64().unwrap();
                        assert!(
                            [-32600, -32601, -32602, -32020, -32022].contains(&code),
                            "code {code}"
                        );
                        assert!(answer["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
                    }
                }
                Some(Ok(_)) => panic!("a notification or response was answered"),
            }
        }
    }
});

fn check_result(method: &str, result: &Value) {
    match method {
        "initialize" => {
            let v = result["protocolVersion"].as_str().unwrap();
            assert!(SESSION_VERSIONS.contains(&v));
            assert_eq!(result["serverInfo"]["name"], mcp::SERVER_NAME);
        }
        "ping" | "logging/setLevel" => assert_eq!(result, &serde_json::json!({})),
        "server/discover" => {
            assert_eq!(result["supportedVersions"], serde_json::json!(ALL_VERSIONS))
        }
        "resources/list" | "resources/templates/list" | "resources/read" => {
            assert!(result.is_object());
        }
        other => panic!("a result for method {other:?}"),
    }
}
