//! Grants: one per connection of an agent app to a pairing, kept in the pairing's storage.
//! Refresh tokens rotate on every use; the previous one stays valid for a short grace after the
//! rotation while the new one is unused (so a retry after a lost answer works); an older one, or
//! the previous one after its grace, revokes the whole grant. A refresh token carries a tag
//! keyed by the relay, so one the relay did not issue is refused before any pairing is asked.
//! Every decision is here, over plain values; the pairing's Durable Object stores what it
//! returns.
//!
//! Approving never removes another connection (every Claude user shares one client id, so
//! "the same client replaces" would let a phished approval push out the person's own). A
//! connection unused for [`UNUSED_EXPIRY_MS`] (its refresh token's life: it can no longer be
//! used anyway) is dropped when the list is read or a grant made; past [`MAX_GRANTS`] live ones
//! a new approval is refused with a sentence saying to forget one.

use tabrelay_bundle::protocol::ConnectionInfo;

use crate::oauth::connect::Requester;

use crate::crypto::{random_token, sha256_hex, Entropy};
use crate::limits::{
    MAX_GRANTS, PREVIOUS_TOKEN_GRACE_MS, REFRESH_TOKEN_TTL_MS, RETIRED_KEPT, UNUSED_EXPIRY_MS,
};

/// Whether a grant may be made at `now_ms`, given the replays of its authorization code the
/// pairing recorded for its id (until when each is kept): not when a replay of its code
/// revoked it first. A replay's revocation names the grant id its first redemption chose, so
/// the two orders come to the same: made then revoked, or revoked then refused.
#[must_use]
pub fn may_make(replayed_until: &[u64], now_ms: u64) -> bool {
    !replayed_until.iter().any(|until| now_ms < *until)
}

/// One connection, as stored. Refresh tokens are kept as hashes only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The grant's id (named in its access tokens).
    pub id: String,
    /// The client's id.
    pub client_id: String,
    /// Who asked for it (its `verified` domain, when the connection was made: the tab's cards
    /// say it with each call).
    pub requester: Requester,
    /// When the connection was made.
    pub created_ms: u64,
    /// When it last refreshed or called.
    pub used_ms: u64,
    /// SHA-256 of the newest refresh token.
    current: String,
    /// SHA-256 of the one before, valid until `current` is first used, and only within
    /// [`PREVIOUS_TOKEN_GRACE_MS`] of `rotated_ms`.
    previous: Option<String>,
    /// When `previous` was rotated away (a retry with it does not move this).
    rotated_ms: u64,
    /// SHA-256 of older ones: using one means a token leaked.
    retired: Vec<String>,
    /// The person stopped this agent in their tab: its calls are refused until they let it go
    /// on (kept in the row, so an eviction does not let it go on).
    pub stopped: bool,
}

/// What a refresh comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Refreshed {
    /// A new refresh token (the grant to store holds its hash).
    Rotated {
        /// The grant, updated.
        grant: Box<Grant>,
        /// The new refresh token's secret part.
        secret: String,
    },
    /// An old token was used again: the whole grant is revoked (delete it).
    Reused,
    /// Not a token of this grant, or expired: refused, nothing changes.
    Unknown,
}

impl Grant {
    /// A new grant and its first refresh token's secret.
    pub fn new(
        id: String,
        client_id: String,
        requester: Requester,
        now_ms: u64,
        entropy: &mut dyn Entropy,
    ) -> (Self, String) {
        let secret = random_token(entropy, 32);
        let grant = Self {
            id,
            client_id,
            requester,
            created_ms: now_ms,
            used_ms: now_ms,
            current: sha256_hex(secret.as_bytes()),
            previous: None,
            rotated_ms: now_ms,
            retired: Vec::new(),
            stopped: false,
        };
        (grant, secret)
    }

    /// Uses refresh token `secret` at `now_ms`.
    pub fn refresh(mut self, secret: &str, now_ms: u64, entropy: &mut dyn Entropy) -> Refreshed {
        let hash = sha256_hex(secret.as_bytes());
        if now_ms >= self.used_ms + REFRESH_TOKEN_TTL_MS {
            return Refreshed::Unknown;
        }
        if hash == self.current {
            // The newest token's first use: the one before it is retired.
            if let Some(p) = self.previous.take() {
                self.retire(p);
            }
            self.previous = Some(hash);
            self.rotated_ms = now_ms;
        } else if self.previous.as_deref() == Some(hash.as_str()) {
            if now_ms >= self.rotated_ms + PREVIOUS_TOKEN_GRACE_MS {
                // Past the grace: not a retry but a copy of a token already rotated.
                return Refreshed::Reused;
            }
            // A retry with the token before: the unused newest one is retired instead.
            let unused = core::mem::take(&mut self.current);
            self.retire(unused);
        } else if self.retired.contains(&hash) {
            return Refreshed::Reused;
        } else {
            return Refreshed::Unknown;
        }
        let fresh = random_token(entropy, 32);
        self.current = sha256_hex(fresh.as_bytes());
        self.used_ms = now_ms;
        Refreshed::Rotated { grant: Box::new(self), secret: fresh }
    }

    fn retire(&mut self, hash: String) {
        self.retired.push(hash);
        if self.retired.len() > RETIRED_KEPT {
            self.retired.remove(0);
        }
    }
}

impl Grant {
    /// The connection as the tab lists it.
    #[must_use]
    pub fn info(&self) -> ConnectionInfo {
        ConnectionInfo {
            id: self.id.clone(),
            client: self.requester.client_name.clone(),
            host: self.requester.host.clone(),
            created_ms: self.created_ms,
            used_ms: self.used_ms,
            place: self.requester.place.clone(),
            stopped: self.stopped,
        }
    }

    /// Whether this connection is of the client asking for a code: the same client id, or a
    /// client id that is a metadata document of the same verified domain (every user of one
    /// agent app shares its document, so this says "this app already has a connection here").
    #[must_use]
    pub fn is_of(&self, client_id: &str, verified: Option<&str>) -> bool {
        let document_of = |domain: &str| {
            crate::text::find(&self.client_id, "://").is_some()
                && crate::oauth::clients::host_of(&self.client_id) == domain
        };
        (!client_id.is_empty() && self.client_id == client_id) || verified.is_some_and(document_of)
    }

    /// Whether the connection went unused for [`UNUSED_EXPIRY_MS`] and is to be dropped.
    #[must_use]
    pub fn expired(&self, now_ms: u64) -> bool {
        now_ms >= self.used_ms.saturating_add(UNUSED_EXPIRY_MS)
    }

    /// Whether `secret` is any refresh token this grant issued (to revoke it by, RFC 7009).
    #[must_use]
    pub fn issued(&self, secret: &str) -> bool {
        let hash = sha256_hex(secret.as_bytes());
        hash == self.current
            || self.previous.as_ref() == Some(&hash)
            || self.retired.contains(&hash)
    }
}

/// Whether a pairing holding `stored` has room for another connection at `now_ms` (expired
/// ones do not count: they are dropped first). Never makes room by removing one.
#[must_use]
pub fn has_room(stored: &[Grant], now_ms: u64) -> bool {
    stored.iter().filter(|g| !g.expired(now_ms)).count() < MAX_GRANTS
}

// Grants stored before the grace was bounded have no `rotated_ms`: their last use stands in.
tabrelay_bundle::codec!(Grant, "a grant", {
    id, client_id, requester as flat, created_ms, used_ms, current, previous,
    rotated_ms else "used_ms", retired, stopped or false
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::testing::{round_trip, Counter};
    use crate::limits::REPLAYED_KEPT_MS;
    use tabrelay_bundle::fields::FromValue;

    fn requester(name: &str, host: &str) -> Requester {
        Requester { client_name: name.into(), host: host.into(), place: None, verified: None }
    }

    fn grant() -> (Grant, String, Counter) {
        let mut rng = Counter(3);
        let (g, s) =
            Grant::new("g0".into(), "cid".into(), requester("Claude", "claude.ai"), 1000, &mut rng);
        (g, s, rng)
    }

    fn rotate(g: Grant, secret: &str, now: u64, rng: &mut Counter) -> (Grant, String) {
        match g.refresh(secret, now, rng) {
            Refreshed::Rotated { grant, secret } => (*grant, secret),
            other => panic!("expected a rotation, got {other:?}"),
        }
    }

    #[test]
    fn a_grant_reads_back_as_written() {
        let (g, s0, mut rng) = grant();
        round_trip(&g);
        let (g, s1) = rotate(g, &s0, 2000, &mut rng);
        let (g, _) = rotate(g, &s1, 3000, &mut rng);
        round_trip(&g);
    }

    #[test]
    fn a_refresh_token_rotates_on_every_use() {
        let (g, s0, mut rng) = grant();
        let (g, s1) = rotate(g, &s0, 2000, &mut rng);
        assert_ne!(s0, s1);
        let (g, s2) = rotate(g, &s1, 3000, &mut rng);
        assert_eq!(g.used_ms, 3000);
        assert_ne!(s1, s2);
    }

    #[test]
    fn the_previous_token_works_until_the_new_one_is_used() {
        let (g, s0, mut rng) = grant();
        let (g, s1) = rotate(g, &s0, 2000, &mut rng);
        // The answer carrying s1 was lost: the client retries with s0.
        let (g, s1b) = rotate(g, &s0, 2100, &mut rng);
        // s1 was never used and is now retired; s1b is the newest.
        let (g, s2) = rotate(g, &s1b, 2200, &mut rng);
        // Now s0 is old: its use revokes everything.
        assert_eq!(g.clone().refresh(&s0, 2300, &mut rng), Refreshed::Reused);
        assert_eq!(g.clone().refresh(&s1, 2300, &mut rng), Refreshed::Reused);
        let _ = rotate(g, &s2, 2400, &mut rng);
    }

    #[test]
    fn an_old_token_revokes_the_grant_and_a_stranger_changes_nothing() {
        let (g, s0, mut rng) = grant();
        let (g, s1) = rotate(g, &s0, 2000, &mut rng);
        let (g, _s2) = rotate(g, &s1, 3000, &mut rng);
        assert_eq!(g.clone().refresh(&s0, 4000, &mut rng), Refreshed::Reused);
        assert_eq!(g.clone().refresh("made-up", 4000, &mut rng), Refreshed::Unknown);
    }

    #[test]
    fn a_token_unused_for_its_lifetime_expires() {
        let (g, s0, mut rng) = grant();
        assert_eq!(g.refresh(&s0, 1000 + REFRESH_TOKEN_TTL_MS, &mut rng), Refreshed::Unknown);
    }

    #[test]
    fn the_previous_token_is_a_retry_only_within_its_grace() {
        let (g, s0, mut rng) = grant();
        let (g, _s1) = rotate(g, &s0, 2000, &mut rng);
        // Just inside the grace: a retry, which rotates again.
        let last = 2000 + PREVIOUS_TOKEN_GRACE_MS - 1;
        let (retried, s1b) = rotate(g.clone(), &s0, last, &mut rng);
        // A retry does not restart the grace: at its end s0 is reuse, though s1b is unused.
        let end = 2000 + PREVIOUS_TOKEN_GRACE_MS;
        assert_eq!(retried.clone().refresh(&s0, end, &mut rng), Refreshed::Reused);
        let _ = rotate(retried, &s1b, end, &mut rng);
        // Past the grace with the newest unused: reuse, which revokes the grant.
        assert_eq!(g.refresh(&s0, end, &mut rng), Refreshed::Reused);
    }

    #[test]
    fn the_grace_runs_from_each_rotation() {
        let (g, s0, mut rng) = grant();
        let (g, s1) = rotate(g, &s0, 2000, &mut rng);
        let later = 2000 + 10 * PREVIOUS_TOKEN_GRACE_MS;
        let (g, _s2) = rotate(g, &s1, later, &mut rng);
        // s1 was rotated away at `later`: a retry with it works within the grace from then.
        let _ = rotate(g.clone(), &s1, later + PREVIOUS_TOKEN_GRACE_MS - 1, &mut rng);
        assert_eq!(g.refresh(&s1, later + PREVIOUS_TOKEN_GRACE_MS, &mut rng), Refreshed::Reused);
    }

    #[test]
    fn a_grant_stored_before_the_grace_reads_with_its_last_use_as_the_rotation() {
        let (g, s0, mut rng) = grant();
        let (g, _) = rotate(g, &s0, 5000, &mut rng);
        let mut v = crate::crypto::testing::value_of(&g);
        v.as_object_mut().unwrap().remove("rotated_ms");
        let read = Grant::from_value(v).unwrap();
        assert_eq!(read.rotated_ms, 5000);
    }

    #[test]
    fn a_grant_whose_code_was_replayed_first_is_not_made_while_the_replay_is_kept() {
        // The replay's revocation reached the pairing at 1000, before the first redemption's
        // creation of grant g1.
        // (Another grant's replays are not its: the object reads those of its id.)
        let replayed = [1000 + REPLAYED_KEPT_MS];
        assert!(!may_make(&replayed, 1001));
        assert!(!may_make(&replayed, 1000 + REPLAYED_KEPT_MS - 1));
        assert!(may_make(&[], 1001));
        assert!(may_make(&replayed, 1000 + REPLAYED_KEPT_MS), "a record is dropped in time");
    }

    #[test]
    fn a_grant_knows_every_token_it_issued() {
        let (g, s0, mut rng) = grant();
        let (g, s1) = rotate(g, &s0, 2000, &mut rng);
        let (g, s2) = rotate(g, &s1, 3000, &mut rng);
        assert!(g.issued(&s0) && g.issued(&s1) && g.issued(&s2));
        assert!(!g.issued("other"));
    }

    #[test]
    fn approving_never_removes_a_connection_and_the_bound_refuses_instead() {
        let mut rng = Counter(9);
        let mut stored: Vec<Grant> = (0..MAX_GRANTS as u64 - 1)
            .map(|i| {
                let client = if i < 2 { "claude".to_owned() } else { format!("c{i}") };
                Grant::new(format!("g{i}"), client, requester("n", "h"), 100 + i, &mut rng).0
            })
            .collect();
        assert!(has_room(&stored, 200), "a second connection of the same client id is room too");
        assert!(!stored.iter().any(|g| g.expired(200)), "nothing is pushed out");
        let (last, _) =
            Grant::new("last".into(), "claude".into(), requester("n", "h"), 300, &mut rng);
        stored.push(last);
        assert!(!has_room(&stored, 400), "at the bound a new approval is refused");
    }

    #[test]
    fn a_connection_unused_for_its_refresh_tokens_life_expires() {
        let (mut g, _, mut rng) = grant();
        g.requester.place = Some("Lisbon, PT".into());
        let (fresh, _) = Grant::new("g1".into(), "cid".into(), requester("n", "h"), 5000, &mut rng);
        let stored = [g.clone(), fresh];
        let expired = |now_ms| -> Vec<&str> {
            stored.iter().filter(|g| g.expired(now_ms)).map(|g| g.id.as_str()).collect()
        };
        assert!(expired(1000 + UNUSED_EXPIRY_MS - 1).is_empty());
        assert_eq!(expired(1000 + UNUSED_EXPIRY_MS), ["g0"]);
        let full: Vec<Grant> = (0..MAX_GRANTS).map(|_| g.clone()).collect();
        assert!(has_room(&full, 1000 + UNUSED_EXPIRY_MS), "expired ones make no count");
        assert_eq!(g.info().place.as_deref(), Some("Lisbon, PT"));
        round_trip(&g);
    }

    #[test]
    fn retired_tokens_are_bounded() {
        let (mut g, mut s, mut rng) = grant();
        for i in 0..(RETIRED_KEPT as u64 + 5) {
            (g, s) = rotate(g, &s, 2000 + i, &mut rng);
        }
        assert!(g.retired.len() <= RETIRED_KEPT);
    }
}
