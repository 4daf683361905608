//! What the connect tests share: the usual request, seal and browser, and the commands they make.

use super::Command;
use crate::oauth::authorize::{AuthRequest, SealId};

pub(super) const ORIGIN: &str = "https://relay.example";
pub(super) const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub(super) const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

/// A code made for the usual request, seal and browser.
pub(super) fn create() -> Command {
    Command::Create { request: request(), seal: seal(), browser_hash: "b".into(), place: None }
}

pub(super) fn seal() -> SealId {
    SealId("seal-1".into())
}

pub(super) fn request() -> AuthRequest {
    AuthRequest {
        client_id: "cid".into(),
        client_name: "Claude".into(),
        verified_domain: None,
        redirect_uri: "https://claude.ai/cb".into(),
        state: Some("st".into()),
        code_challenge: CHALLENGE.into(),
        resource: Some(ORIGIN.into()),
        scope: None,
    }
}

pub(super) fn linked(pairing: &str) -> Command {
    Command::Approve { pairing: pairing.into(), linked: true }
}

pub(super) fn confirm(secret: &str, browser: &str) -> Command {
    Command::Confirm { secret: secret.into(), browser_hash: browser.into() }
}

pub(super) fn poll(browser: &str) -> Command {
    Command::Poll { browser_hash: browser.into(), issuer: ORIGIN.into() }
}
