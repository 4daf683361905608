//! Host names judged by who controls what is under them: shared hosts, where anyone may
//! publish, so a document there verifies nobody; and wildcard-DNS names, which resolve to the
//! address written in them (`127.0.0.1.nip.io` is 127.0.0.1), so the relay never fetches them.
//!
//! Each entry counts with every name under it (`claude.github.io` is under `github.io`). Each
//! list is one text, its names separated by spaces: a list of strings costs the Worker eight
//! bytes of pointers a name.

/// Hosts where anyone may publish under a name of the host's (project pages, user content,
/// preview deployments, tunnels). A client metadata document served from one of them is read,
/// but its domain is not shown as verified: whoever publishes there is not the host's owner.
///
/// Source: the Public Suffix List's private section (<https://publicsuffix.org/list/>,
/// `public_suffix_list.dat` between `===BEGIN PRIVATE DOMAINS===` and its end, as of its
/// commit e8c9a2b of 2026-08-19), where a host lists the names under which its users publish:
/// the entries below are those of code hosts, static and serverless hosting, preview
/// deployments, tunnels and site builders an agent app's document could be put on, chosen from
/// it; and the big clouds' storage and hosting names, where anyone with an account publishes,
/// the list does not carry whole: `amazonaws.com` (S3 buckets by name or by path,
/// `s3.<region>.amazonaws.com`, and every customer endpoint), `on.aws` (Lambda URLs),
/// `core.windows.net` (Azure storage accounts' blobs and static sites), Google's storage names
/// under `googleapis.com` (`www.googleapis.com` serves any public object by path; its other
/// names are Google's own, so each storage name is listed)
/// and `googleusercontent.com`; and `glitch.me` (Glitch's project pages), not on the list
/// either. A name under one of these may still be an app's own (Google's under
/// `googleapis.com`); one its maker serves for itself is verified as before.
pub const SHARED_HOSTS: &str = concat!(
    // Code hosts' pages and raw files.
    "github.io ",
    "githubusercontent.com ",
    "githubpreview.dev ",
    "gitlab.io ",
    "bitbucket.io ",
    "codeberg.page ",
    "readthedocs.io ",
    // Cloudflare.
    "pages.dev ",
    "workers.dev ",
    "r2.dev ",
    "r2.cloudflarestorage.com ",
    "trycloudflare.com ",
    // Static and serverless hosting, preview deployments.
    "netlify.app ",
    "vercel.app ",
    "vercel.dev ",
    "herokuapp.com ",
    "onrender.com ",
    "fly.dev ",
    "deno.dev ",
    "up.railway.app ",
    "repl.co ",
    "replit.app ",
    "replit.dev ",
    "glitch.me ",
    "csb.app ",
    "val.run ",
    "hf.space ",
    "supabase.co ",
    "pythonanywhere.com ",
    // Google, Microsoft and Amazon hosting.
    "web.app ",
    "firebaseapp.com ",
    "appspot.com ",
    "run.app ",
    "cloudfunctions.net ",
    "blogspot.com ",
    "translate.goog ",
    "azurewebsites.net ",
    "azurestaticapps.net ",
    "storage.googleapis.com ",
    "www.googleapis.com ",
    "commondatastorage.googleapis.com ",
    "firebasestorage.googleapis.com ",
    "firebasestorage.app ",
    "firebaseio.com ",
    "googleusercontent.com ",
    "core.windows.net ",
    "azureedge.net ",
    "azurefd.net ",
    "azure-api.net ",
    "azurecontainerapps.io ",
    "cloudapp.azure.com ",
    "cloudapp.net ",
    "cloudfront.net ",
    "amazonaws.com ",
    "on.aws ",
    "amplifyapp.com ",
    "elasticbeanstalk.com ",
    "awsapprunner.com ",
    "digitaloceanspaces.com ",
    "ondigitalocean.app ",
    "backblazeb2.com ",
    // CDNs that serve any repository's or package's files.
    "jsdelivr.net ",
    "unpkg.com ",
    "githack.com ",
    // Tunnels to someone's own machine.
    "ngrok.app ",
    "ngrok.io ",
    "ngrok.dev ",
    "ngrok-free.app ",
    "ngrok-free.dev ",
    "ngrok.pizza ",
    "ngrok.pro ",
    "ngrok-free.pizza ",
    "loca.lt ",
    "serveo.net ",
    // Site builders.
    "notion.site ",
    "webflow.io ",
    "wixsite.com ",
    "framer.app ",
    "carrd.co ",
);

/// Wildcard-DNS services: every name under them resolves to the IP address written in the
/// name (or to 127.0.0.1), so a fetch of one reaches whatever address its writer chose, a
/// private one included. None is fetched.
///
/// Sources: each service's own page: nip.io (<https://nip.io>), sslip.io (<https://sslip.io>),
/// xip.io (Basecamp's, now gone; its names may be bought back), traefik.me
/// (<https://traefik.me>), localtest.me (<https://readme.localtest.me>), lvh.me, vcap.me
/// (Cloud Foundry's), lacolhost.com and local.gd (<https://local.gd>), all of which answer
/// 127.0.0.1 or the address in the name.
pub const WILDCARD_DNS: &str = concat!(
    "nip.io ",
    "sslip.io ",
    "xip.io ",
    "traefik.me ",
    "localtest.me ",
    "lvh.me ",
    "vcap.me ",
    "lacolhost.com ",
    "local.gd ",
);

/// Whether `host` (lower case) is `suffix` or a name under it.
#[must_use]
pub fn is_under(host: &str, suffix: &str) -> bool {
    host == suffix || host.strip_suffix(suffix).is_some_and(|h| h.ends_with('.'))
}

/// Whether `host` (lower case) is one of `names` or a name under one.
#[must_use]
pub fn is_under_any<'n>(host: &str, names: impl IntoIterator<Item = &'n str>) -> bool {
    for name in names {
        if is_under(host, name) {
            return true;
        }
    }
    false
}

/// Whether anyone may publish on `host` ([`SHARED_HOSTS`]).
#[must_use]
pub fn is_shared(host: &str) -> bool {
    is_under_any(host, SHARED_HOSTS.split_ascii_whitespace())
}

/// Whether `host` resolves to an address written in it ([`WILDCARD_DNS`]).
#[must_use]
pub fn is_wildcard_dns(host: &str) -> bool {
    is_under_any(host, WILDCARD_DNS.split_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_hosts_are_known_with_every_name_under_them() {
        for host in [
            "raw.githubusercontent.com",
            "gist.githubusercontent.com",
            "claude-ai.github.io",
            "claude.pages.dev",
            "x.workers.dev",
            "app.netlify.app",
            "app.vercel.app",
            "app.herokuapp.com",
            "app.glitch.me",
            "app.repl.co",
            "app.web.app",
            "app.firebaseapp.com",
            "app.azurewebsites.net",
            "x.blogspot.com",
            "abc.ngrok-free.app",
            "abc.ngrok.io",
            "a-b-c.trycloudflare.com",
            "bucket.s3.amazonaws.com",
            "github.io",
            // The big clouds' storage and hosting, by name and by path.
            "storage.googleapis.com",
            "firebasestorage.googleapis.com",
            "app.firebasestorage.app",
            "lh3.googleusercontent.com",
            "s3.amazonaws.com",
            "s3.us-east-1.amazonaws.com",
            "bucket.s3.eu-west-2.amazonaws.com",
            "s3-website-us-east-1.amazonaws.com",
            "abc.execute-api.us-east-1.amazonaws.com",
            "abc.lambda-url.us-east-1.on.aws",
            "account.blob.core.windows.net",
            "account.z6.web.core.windows.net",
            "x.azureedge.net",
            "d111111abcdef8.cloudfront.net",
            "x.r2.dev",
            "x.pages.dev",
            "x.appspot.com",
            "abc.ngrok.pizza",
            "bucket.nyc3.digitaloceanspaces.com",
            "cdn.jsdelivr.net",
            "someones-db.firebaseio.com",
            "www.googleapis.com",
        ] {
            assert!(is_shared(host), "{host}");
        }
        for host in [
            "claude.ai",
            "github.com",
            "notgithub.io",
            "vercel.com",
            "example.com",
            "generativelanguage.googleapis.com",
            "windows.net",
            "aws.amazon.com",
        ] {
            assert!(!is_shared(host), "{host}");
        }
    }

    #[test]
    fn wildcard_dns_names_are_known_with_every_name_under_them() {
        for host in [
            "127.0.0.1.nip.io",
            "10-0-0-1.sslip.io",
            "169.254.169.254.xip.io",
            "nip.io",
            "app.localtest.me",
            "lvh.me",
            "x.traefik.me",
        ] {
            assert!(is_wildcard_dns(host), "{host}");
        }
        assert!(!is_wildcard_dns("snip.io") && !is_wildcard_dns("claude.ai"));
    }

    #[test]
    fn no_host_is_both_and_every_entry_is_a_lower_case_name() {
        let entries =
            SHARED_HOSTS.split_ascii_whitespace().chain(WILDCARD_DNS.split_ascii_whitespace());
        for entry in entries {
            assert!(entry.contains('.') && !entry.starts_with('.'), "{entry}");
            assert!(entry
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-'));
            assert!(!(is_shared(entry) && is_wildcard_dns(entry)), "{entry}");
        }
    }
}
