//! A memory's identity, so two unrelated repositories of one name never share
//! a memory: the normalised `origin` remote (one for every clone, worktree and
//! URL form), else the primary root's path (docs/design.md §7). Credentials in
//! a URL are stripped before it is recorded anywhere.

use std::path::Path;

/// `github.com/me/app` from `git@github.com:me/app.git`,
/// `https://user:token@GitHub.com/me/app/`, `ssh://git@github.com:22/me/app`;
/// a local path as itself (without `.git`). `None` for an empty URL.
pub fn normalise_remote(url: &str) -> Option<String> {
    let url = url.trim();
    if url.is_empty() {
        return None;
    }
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            ("", rest)
        } else {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            // user:password@host:port
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            let host = host.split_once(':').map_or(host, |(h, _)| h);
            (host, path)
        }
    } else if let Some((authority, path)) = url.split_once(':').filter(|(a, _)| !a.contains('/') && a.len() > 1) {
        // scp-like: [user@]host:path
        (authority.rsplit_once('@').map_or(authority, |(_, h)| h), path)
    } else {
        ("", url)
    };
    let path = path.trim_end_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path).trim_end_matches('/');
    Some(if host.is_empty() {
        path.to_string()
    } else {
        format!("{}/{}", host.to_ascii_lowercase(), path.trim_start_matches('/'))
    })
}

/// The identity of a repository's origin, from its common git folder.
pub fn of_origin(common_dir: &Path) -> Option<String> {
    crate::git::origin_url(common_dir).and_then(|url| normalise_remote(&url))
}

/// The identity of a folder outside any remote: its path.
pub fn of_folder(root: &Path) -> String {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    format!("path:{}", root.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remotes_normalise_to_one_identity() {
        let cases = [
            ("git@github.com:me/app.git", "github.com/me/app"),
            ("https://github.com/me/app.git", "github.com/me/app"),
            ("https://github.com/me/app", "github.com/me/app"),
            ("https://user:s3cret@GitHub.com/me/app/", "github.com/me/app"),
            ("https://ghp_token@github.com/me/app.git", "github.com/me/app"),
            ("ssh://git@github.com:22/me/app.git", "github.com/me/app"),
            ("ssh://github.com/me/app", "github.com/me/app"),
            ("git://example.org/team/tool.git", "example.org/team/tool"),
            ("/srv/git/app.git", "/srv/git/app"),
            ("file:///srv/git/app.git/", "/srv/git/app"),
            ("../sibling.git", "../sibling"),
        ];
        for (url, want) in cases {
            assert_eq!(normalise_remote(url).as_deref(), Some(want), "{url}");
        }
        assert_eq!(normalise_remote("  "), None);
    }
}
