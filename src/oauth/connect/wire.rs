//! The wire between the Worker and a code's Durable Object: what the Worker asks
//! ([`CodeRequest`] carrying a [`Command`]) and what the object replies ([`CodeReply`]), each
//! written and read here only.

use tabrelay_bundle::fields::{Fields, Flat, Message, Object, WireError};

use super::ConnectCode;
use crate::oauth::authorize::{AuthRequest, SealId};
use crate::oauth::error::OAuthError;

/// What the Worker asks a code's Durable Object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Start a session for a new code (refused if the code is taken; when the same seal took
    /// it, the answer says the code was made already).
    Create {
        /// The checked request.
        request: AuthRequest,
        /// The sealed request it came in.
        seal: SealId,
        /// SHA-256 of the browser's cookie secret.
        browser_hash: String,
        /// Where the waiting page's browser is, when the platform says.
        place: Option<String>,
    },
    /// A tab asks who is asking for the code.
    Describe,
    /// A tab of `pairing` approves the code.
    Approve {
        /// The pairing.
        pairing: String,
        /// The tab sent the waiting page's link reference, not the code typed: the approval
        /// waits for the browser's confirmation ([`Command::Confirm`]).
        linked: bool,
    },
    /// The relay's confirm page, opened in a browser with the ticket of a linked approval:
    /// the approval holds when that browser carries the waiting page's cookie.
    Confirm {
        /// The ticket's secret part.
        secret: String,
        /// SHA-256 of the cookie secret the browser sent (empty: none).
        browser_hash: String,
    },
    /// A tab denies the code.
    Deny,
    /// The waiting page asks whether it may go on.
    Poll {
        /// SHA-256 of the cookie secret the page's browser sent.
        browser_hash: String,
        /// The origin, for `iss`.
        issuer: String,
    },
    /// The token endpoint redeems the authorization code.
    Redeem(Redemption),
}

/// What a client redeeming an authorization code sent, and the id its grant will get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redemption {
    /// The code's secret part.
    pub secret: String,
    /// The client redeeming.
    pub client_id: String,
    /// The redirect URI it sends.
    pub redirect_uri: Option<String>,
    /// The PKCE verifier.
    pub code_verifier: Option<String>,
    /// The resource, when sent.
    pub resource: Option<String>,
    /// This origin.
    pub origin: String,
    /// The id the grant will have (chosen by the token endpoint), for a replay to revoke.
    pub grant: String,
}

/// Who asks for a connection, as the person approves it and the pairing keeps it: written as
/// these fields of a code's description, of what a redeemed code grants, of the pairing's grant
/// request and of its stored grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requester {
    /// The client's name (as it registered or its metadata document says; not verified).
    pub client_name: String,
    /// The host of its redirect URI (where its browser returns).
    pub host: String,
    /// Where the browser that asked was ("City, CC"), when the platform said.
    pub place: Option<String>,
    /// The domain that verified the client (its metadata document's), if any.
    pub verified: Option<String>,
}

/// What a redeemed code grants: the token endpoint turns it into tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    /// The pairing the tokens reach.
    pub pairing: String,
    /// Who asked.
    pub requester: Requester,
}

/// What the Worker sends a code's Durable Object: the code (which names the object) and the
/// command. Written and read here only ([`CodeRequest::encode`], [`CodeRequest::decode`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRequest {
    /// The code, normalised.
    pub code: String,
    /// What to do.
    pub command: Command,
}

impl CodeRequest {
    /// The request as the body of the object's fetch.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        tabrelay_bundle::fields::Encode::to_json(self)
    }

    /// A fetch's body read back.
    ///
    /// # Errors
    /// [`WireError`] when it is not a request, or names no code.
    pub fn decode(body: &[u8]) -> Result<(ConnectCode, Command), WireError> {
        let request: Self = tabrelay_bundle::read_wire(body)?;
        let code = ConnectCode::parse(&request.code).ok_or(WireError::Not("a connect code"))?;
        Ok((code, request.command))
    }
}

/// What a code's Durable Object replies to a [`Command`]. Written and read here only
/// ([`CodeReply::encode`], [`CodeReply::decode`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeReply {
    /// [`Command::Create`]: the session is made.
    Created,
    /// [`Command::Create`]: this seal made the code already (a seal makes one code).
    SealUsed,
    /// [`Command::Create`]: another live request holds these letters.
    Taken,
    /// [`Command::Describe`], [`Command::Approve`] or [`Command::Deny`] went through: who asks.
    Described(Description),
    /// [`Command::Approve`] of a link reference: the approval waits for the browser, which
    /// opens the confirm page with this ticket's secret.
    ToConfirm {
        /// The client's name.
        client: String,
        /// The ticket's secret part.
        secret: String,
    },
    /// [`Command::Confirm`]: the browser is the waiting page's; the code is approved.
    Confirmed {
        /// The client's name.
        client: String,
    },
    /// [`Command::Describe`], [`Command::Approve`], [`Command::Deny`] or [`Command::Confirm`]
    /// refused, with the sentence the tab (or the confirm page) shows.
    Refused {
        /// Why.
        sentence: String,
    },
    /// [`Command::Poll`]: where the waiting page stands.
    Poll(PollState),
    /// [`Command::Redeem`]: what the code grants.
    Redeemed {
        /// The grant to make.
        granted: Granted,
    },
    /// [`Command::Redeem`] refused.
    RedeemRefused {
        /// The OAuth error the token endpoint answers (written `error`, `error_description`).
        refused: OAuthError,
        /// A replay of a redeemed code: the grant it made, to revoke.
        revoke: Option<Revoke>,
    },
}

/// Who asks for a code, as the tab shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    /// Who asks (the place: the waiting page's browser's).
    pub requester: Requester,
    /// The client's id (the pairing finds this client's connections by it; not shown).
    pub client_id: String,
    /// How long ago the waiting page was made.
    pub age_ms: u64,
    /// The well-known app the name looks like or claims, if any (see `name_warning`).
    pub lookalike: Option<String>,
    /// What about the name should make the person look twice
    /// ([`crate::oauth::lookalike::NameWarning`]'s kind), if anything.
    pub name_warning: Option<String>,
}

/// Where a waiting page stands, as the page reads it (`{"state": …}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PollState {
    /// No live session: the page says to start again.
    Expired,
    /// The page's browser is not the one that made the code.
    NotThisBrowser,
    /// No tab decided yet.
    Waiting {
        /// How long the code has left.
        expires_in_ms: u64,
    },
    /// Approved: the browser goes on with an authorization code.
    Approved {
        /// Where.
        redirect: String,
    },
    /// Denied: the browser goes back with `access_denied`.
    Denied {
        /// Where.
        redirect: String,
    },
    /// Collected already.
    Done,
}

/// A grant to revoke: a replay of the authorization code that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revoke {
    /// The pairing that holds it.
    pub pairing: String,
    /// The grant.
    pub grant: String,
}

impl Message for CodeReply {}

impl CodeReply {
    /// A refusal with the tab's sentence.
    pub(super) fn refused(sentence: &str) -> Self {
        Self::Refused { sentence: sentence.to_owned() }
    }
}

tabrelay_bundle::codec!(Command, "a command", enum {
    "describe" => Describe,
    "deny" => Deny,
    "create" => Create { request, seal, browser_hash, place or None },
    "approve" => Approve { pairing, linked or false },
    "confirm" => Confirm { secret, browser_hash },
    "poll" => Poll { browser_hash, issuer },
    "redeem" => Redeem(Redemption),
});

tabrelay_bundle::codec!(Redemption, "a redemption", {
    secret, client_id, redirect_uri, code_verifier, resource, origin, grant
});

tabrelay_bundle::codec!(Requester, "who asks", { client_name, host, place or None, verified or None });

tabrelay_bundle::codec!(Granted, "a grant", { pairing, requester as flat });

tabrelay_bundle::codec!(CodeRequest, "a command for a code", { code, command });

tabrelay_bundle::codec!(CodeReply, "a code's reply", tag "reply" {
    "created" => Created,
    "seal_used" => SealUsed,
    "taken" => Taken,
    "described" => Described(Description),
    "to_confirm" => ToConfirm { client, secret },
    "confirmed" => Confirmed { client },
    "refused" => Refused { sentence },
    "poll" => Poll(PollState),
    "redeemed" => Redeemed { granted },
    "redeem_refused" => RedeemRefused { refused as flat, revoke },
});
tabrelay_bundle::codec!(Description, "who asks for a code", {
    requester as flat, client_id, age_ms, lookalike or None, name_warning or None
});

tabrelay_bundle::codec!(PollState, "a waiting page's state", tag "state" {
    "expired" => Expired,
    "not_this_browser" => NotThisBrowser,
    "waiting" => Waiting { expires_in_ms },
    "approved" => Approved { redirect },
    "denied" => Denied { redirect },
    "done" => Done,
});

tabrelay_bundle::codec!(Revoke, "a grant to revoke", { pairing, grant });

/// An OAuth error across the wire as its body says it: the code (one of those a redemption
/// answers) and the sentence; its status is the code's.
impl Flat for OAuthError {
    fn from_fields(f: &mut Fields) -> Option<Self> {
        let (code, description) = (f.string("error")?, f.string("error_description")?);
        Some(match code.as_str() {
            "invalid_request" => Self::invalid_request(description),
            "invalid_client" => Self::invalid_client(description),
            "invalid_grant" => Self::invalid_grant(description),
            "invalid_target" => Self::invalid_target(description),
            "unsupported_grant_type" => Self::unsupported_grant_type(description),
            _ => return None,
        })
    }

    fn write_fields(&self, o: &mut Object<'_>) {
        o.text("error", self.code);
        o.field("error_description", &self.description);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::testing::round_trip;
    use crate::oauth::connect::fixtures::*;
    use crate::oauth::connect::{Session, Stage};

    /// Every command, with its variations.
    fn commands() -> Vec<Command> {
        vec![
            create(),
            Command::Create {
                request: AuthRequest { verified_domain: Some("claude.ai".into()), ..request() },
                seal: seal(),
                browser_hash: "b".into(),
                place: Some("Lisbon, PT".into()),
            },
            Command::Describe,
            Command::Approve { pairing: "p".into(), linked: false },
            linked("p"),
            confirm("s", "b"),
            Command::Deny,
            Command::Poll { browser_hash: "b".into(), issuer: ORIGIN.into() },
            Command::Redeem(Redemption {
                secret: "s".into(),
                client_id: "cid".into(),
                redirect_uri: None,
                code_verifier: Some(VERIFIER.into()),
                resource: None,
                origin: ORIGIN.into(),
                grant: "g1".into(),
            }),
            Command::Redeem(Redemption {
                secret: "s".into(),
                client_id: "cid".into(),
                redirect_uri: Some("https://claude.ai/cb".into()),
                code_verifier: None,
                resource: Some(ORIGIN.into()),
                origin: ORIGIN.into(),
                grant: "g1".into(),
            }),
        ]
    }

    /// Every reply, with its variations.
    fn replies() -> Vec<CodeReply> {
        vec![
            CodeReply::Created,
            CodeReply::SealUsed,
            CodeReply::Taken,
            CodeReply::Described(Description {
                requester: Requester {
                    client_name: "Claude".into(),
                    host: "claude.ai".into(),
                    place: None,
                    verified: None,
                },
                client_id: "cid".into(),
                age_ms: 5,
                lookalike: None,
                name_warning: None,
            }),
            CodeReply::Described(Description {
                requester: Requester {
                    client_name: "Cla\u{0}ude \"x\"\n".into(),
                    host: "claude.ai".into(),
                    place: Some("Lisbon, PT".into()),
                    verified: Some("claude.ai".into()),
                },
                client_id: "https://claude.ai/m.json".into(),
                age_ms: 12345,
                lookalike: Some("Claude".into()),
                name_warning: Some("looks_like".into()),
            }),
            CodeReply::ToConfirm { client: "C".into(), secret: "s".into() },
            CodeReply::Confirmed { client: "C".into() },
            CodeReply::Refused { sentence: "No.".into() },
            CodeReply::Poll(PollState::Expired),
            CodeReply::Poll(PollState::NotThisBrowser),
            CodeReply::Poll(PollState::Waiting { expires_in_ms: 9 }),
            CodeReply::Poll(PollState::Approved { redirect: "https://a/cb?code=x".into() }),
            CodeReply::Poll(PollState::Denied {
                redirect: "https://a/cb?error=access_denied".into(),
            }),
            CodeReply::Poll(PollState::Done),
            CodeReply::Redeemed {
                granted: Granted {
                    pairing: "p".into(),
                    requester: Requester {
                        client_name: "n".into(),
                        host: "h".into(),
                        place: Some("Lisbon, PT".into()),
                        verified: Some("claude.ai".into()),
                    },
                },
            },
            CodeReply::Redeemed {
                granted: Granted {
                    pairing: "p".into(),
                    requester: Requester {
                        client_name: "n".into(),
                        host: "h".into(),
                        place: None,
                        verified: None,
                    },
                },
            },
            CodeReply::RedeemRefused { refused: OAuthError::invalid_grant("Used."), revoke: None },
            CodeReply::RedeemRefused {
                refused: OAuthError::invalid_grant("Used."),
                revoke: Some(Revoke { pairing: "p".into(), grant: "g".into() }),
            },
        ]
    }

    /// The bytes on the wire, as the derived `Serialize` wrote them before the codec: each
    /// command as a request for code `ABCDE12345`, then each reply, one a line. (But the two
    /// `described` replies: since their asker became a [`Requester`], its client is
    /// `client_name` as in every other message, and a field it does not have is left out.)
    const GOLDEN: &str = include_str!("../../../tests/data/wire/code.txt");

    #[test]
    fn commands_and_replies_read_back_and_are_written_as_before() {
        let mut written = Vec::new();
        for command in commands() {
            let request = CodeRequest { code: "ABCDE12345".into(), command: command.clone() };
            let read = CodeRequest::decode(&request.encode());
            assert_eq!(read, Ok((ConnectCode::parse("ABCDE12345").unwrap(), command)));
            written.push(String::from_utf8(request.encode()).unwrap());
        }
        for reply in replies() {
            assert_eq!(CodeReply::decode(&reply.encode()).as_ref(), Ok(&reply));
            written.push(String::from_utf8(reply.encode()).unwrap());
        }
        let golden: Vec<&str> = GOLDEN.lines().collect();
        assert_eq!(written.len(), golden.len());
        for (w, g) in written.iter().zip(golden) {
            assert_eq!(w, g);
        }
        let stranger = CodeRequest { code: "nope".into(), command: Command::Describe };
        let named_no_code = CodeRequest::decode(&stranger.encode());
        assert_eq!(named_no_code, Err(WireError::Not("a connect code")), "a request names a code");
        assert_eq!(CodeReply::decode(b"{}"), Err(WireError::Not("a code's reply")));
        for refused in [
            OAuthError::invalid_request("r"),
            OAuthError::invalid_client("c"),
            OAuthError::invalid_grant("g"),
            OAuthError::invalid_target("t"),
            OAuthError::unsupported_grant_type("u"),
        ] {
            let reply = CodeReply::RedeemRefused { refused, revoke: None };
            assert_eq!(CodeReply::decode(&reply.encode()), Ok(reply), "with its status");
        }
        let unknown = br#"{"reply":"redeem_refused","error":"server_error","error_description":"x","revoke":null}"#;
        assert_eq!(CodeReply::decode(unknown), Err(WireError::Not("a code's reply")));
        assert_eq!(
            CodeReply::decode(b"{\"reply\":\"poll\"}"),
            Err(WireError::Not("a code's reply"))
        );
    }

    #[test]
    fn sessions_read_back_as_written() {
        let stages = [
            Stage::Waiting,
            Stage::Confirming { pairing: "p".into(), ticket_hash: "t".into(), until_ms: 9 },
            Stage::Approved { pairing: "p".into() },
            Stage::Issued { pairing: "p".into(), code_hash: "h".into(), issued_ms: 5 },
            Stage::Denied,
            Stage::Redeemed { pairing: "p".into(), grant: "g".into(), code_hash: "h".into() },
        ];
        let verified = AuthRequest { verified_domain: Some("claude.ai".into()), ..request() };
        for stage in stages {
            round_trip(&Session {
                request: verified.clone(),
                browser_hash: "b".into(),
                seal: seal(),
                created_ms: 7,
                stage,
                tries: 2,
                place: Some("Lisbon, PT".into()),
            });
        }
    }

    /// A session stored before its codec (by a derived `Serialize`) holds `"tries":0` and
    /// `"place":null` where the codec leaves them out: both rows read as the same session.
    #[test]
    fn sessions_stored_before_the_codec_read_back() {
        let session = Session {
            request: request(),
            browser_hash: "b".into(),
            seal: seal(),
            created_ms: 7,
            stage: Stage::Waiting,
            tries: 0,
            place: None,
        };
        let written = tabrelay_bundle::fields::json_text(&session);
        assert!(!written.contains("tries") && !written.contains("place"), "{written}");
        let before = written.replacen(",\"stage\"", ",\"tries\":0,\"place\":null,\"stage\"", 1);
        assert_ne!(before, written);
        assert_eq!(tabrelay_bundle::from_json::<Session>(before.as_bytes()), Some(session.clone()));
        assert_eq!(tabrelay_bundle::from_json::<Session>(written.as_bytes()), Some(session));
    }
}
