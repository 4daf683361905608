//! `content::tool_result` on any outcome a tab can send (the input, when it reads as one).
//! Checks what `bundle/src/content.rs` guarantees: a `Done` text opens with the data tag and
//! closes it exactly once (nothing in the data can close it), stays within the text limit,
//! and carries the picture only when it is within bounds and of an allowed type, a sound only
//! of an audio type, and a document with its address, type and text inside the data tags under
//! the relay's own address; a `Failed` one quotes the tab's words as data, cut, with the
//! relay's sentence after.
//! An input starting with a tab also runs the outcome with its data repeated past the text
//! limit, so the cut is fuzzed too without libFuzzer writing 150 000-character inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tabrelay::jsonrpc::Id;
use tabrelay::mcp;
use tabrelay_bundle::content::{
    self, DATA_CLOSE, DATA_OPEN, DOCUMENT_MIME_TYPE, DOCUMENT_URI, RESULT_IMAGE_MAX_BYTES,
    RESULT_IMAGE_MAX_SIDE, RESULT_IMAGE_TYPES, RESULT_MEDIA_TYPE_BYTES, RESULT_TEXT_CHARS,
    TAB_ERROR_CHARS,
};
use tabrelay_bundle::fields::JsonText;
use tabrelay_bundle::protocol::{Outcome, TOOL_REFUSED};

fuzz_target!(|data: &[u8]| {
    let Some(outcome) = tabrelay_bundle::from_json::<Outcome>(data) else { return };
    check(&outcome);
    if data.first() == Some(&b'\t') {
        if let Outcome::Done { data, image, structured, .. } = &outcome {
            let structured = *structured;
            let one = data.as_str().chars().count() + 1;
            let copies = RESULT_TEXT_CHARS / one + 2;
            let value: Value = serde_json::from_str(data.as_str()).unwrap();
            let long = JsonText::of(&Value::Array(vec![value; copies]));
            let image = image.clone();
            check(&Outcome::Done { data: long, image, audio: None, resource: None, structured });
        }
    }
    let answer = mcp::call_answer(&Id::Number(1), &mcp::Era::Session, &outcome);
    assert_eq!(answer["result"], content::tool_result(&outcome));
});

fn check(outcome: &Outcome) {
    let result = content::tool_result(outcome);
    let content = result["content"].as_array().expect("a content array");
    assert_eq!(content[0]["type"], "text");
    let text = content[0]["text"].as_str().expect("a text");
    match outcome {
        Outcome::InputRequired { .. } => {
            assert_eq!(result["isError"], true);
            assert_eq!(text, content::INPUT_NOT_POSSIBLE);
        }
        Outcome::Failed { error } if error == TOOL_REFUSED => {
            assert_eq!(result["isError"], true);
            assert_eq!(text, TOOL_REFUSED);
        }
        Outcome::Failed { error } => {
            // The tab's words are quoted as data (cut), never able to close the tags, and the
            // relay's sentence follows.
            assert_eq!(result["isError"], true);
            assert_eq!(content.len(), 1);
            assert!(text.starts_with(DATA_OPEN), "{text:.80}");
            assert_eq!(text.matches(DATA_CLOSE).count(), 1, "{text:.80}");
            assert_eq!(text.matches('<').count(), 2);
            let end = text.find(DATA_CLOSE).unwrap();
            let quoted: String = serde_json::from_str(&text[DATA_OPEN.len()..end]).unwrap();
            let kept: String = error.chars().take(TAB_ERROR_CHARS).collect();
            assert_eq!(quoted, kept);
            assert!(text[end..].contains(content::TAB_ERROR_SAID));
        }
        Outcome::Done { data, image, audio, resource, structured } => {
            assert_eq!(result["isError"], false);
            // Structured content only when the tab said so, and only an object: its data whole.
            match result.get("structuredContent") {
                Some(s) => {
                    assert!(*structured && s.is_object());
                    let data: Value = serde_json::from_str(data.as_str()).unwrap();
                    assert!(tabrelay_fuzz::has_float(&data) || *s == data);
                }
                None => assert!(
                    !*structured
                        || !serde_json::from_str::<Value>(data.as_str()).unwrap().is_object()
                ),
            }
            assert!(text.starts_with(DATA_OPEN), "{text:.80}");
            assert_eq!(text.matches(DATA_CLOSE).count(), 1, "{text:.80}");
            // Every `<` inside the data is escaped, and the relay's notes have none.
            assert_eq!(text.matches('<').count(), 2);
            let end = text.find(DATA_CLOSE).unwrap() + DATA_CLOSE.len();
            let (tagged, notes) = text.split_at(end);
            assert!(tagged.chars().count() <= RESULT_TEXT_CHARS);
            let inner = &tagged[DATA_OPEN.len()..tagged.len() - DATA_CLOSE.len()];
            if notes.contains("was cut") {
                assert_eq!(tagged.chars().count(), RESULT_TEXT_CHARS);
            } else {
                let back: Value = serde_json::from_str(inner).expect("the data reads back");
                let data: Value = serde_json::from_str(data.as_str()).unwrap();
                assert!(tabrelay_fuzz::has_float(&data) || back == data);
            }
            let fits = image.as_ref().is_some_and(|i| {
                i.width <= RESULT_IMAGE_MAX_SIDE
                    && i.height <= RESULT_IMAGE_MAX_SIDE
                    && i.data.len() <= RESULT_IMAGE_MAX_BYTES
                    && RESULT_IMAGE_TYPES.contains(&i.mime_type.as_str())
            });
            // After the text: the picture, the sound and the document, each when it fits.
            let extra: Vec<&str> =
                content[1..].iter().map(|c| c["type"].as_str().unwrap()).collect();
            let expected: Vec<&str> = [
                fits.then_some("image"),
                audio.as_ref().filter(|_| !notes.contains("The sound")).map(|_| "audio"),
                resource.as_ref().filter(|_| !notes.contains("The document")).map(|_| "resource"),
            ]
            .into_iter()
            .flatten()
            .collect();
            assert_eq!(extra, expected);
            for block in &content[1..] {
                if block["type"] == "resource" {
                    let t = block["resource"]["text"].as_str().unwrap();
                    assert!(t.starts_with(DATA_OPEN) && t.ends_with(DATA_CLOSE));
                    assert_eq!(t.matches('<').count(), 2, "a document can close its tags");
                    // Nothing of the app's outside the tags: its address and type are inside.
                    assert_eq!(block["resource"]["uri"], DOCUMENT_URI);
                    assert_eq!(block["resource"]["mimeType"], DOCUMENT_MIME_TYPE);
                    let r = resource.as_ref().unwrap();
                    let inner = &t[DATA_OPEN.len()..t.len() - DATA_CLOSE.len()];
                    let back: Value = serde_json::from_str(inner).expect("the document reads back");
                    assert_eq!(back["uri"], r.uri.as_str());
                    assert_eq!(back["mimeType"], r.mime_type.as_str());
                }
                if block["type"] == "audio" {
                    let mime = block["mimeType"].as_str().unwrap();
                    assert!(mime.starts_with("audio/") && mime.len() <= RESULT_MEDIA_TYPE_BYTES);
                    assert!(!mime.contains([' ', '<', '"', ';']), "{mime:.80}");
                }
            }
            if let (true, Some(img)) = (fits, image) {
                assert_eq!(content[1]["type"], "image");
                assert_eq!(content[1]["data"], img.data.as_str());
                assert_eq!(content[1]["mimeType"], img.mime_type.as_str());
            }
            if image.is_some() && !fits {
                assert!(notes.contains("The picture"), "a left-out picture without a note");
            }
        }
    }
}
