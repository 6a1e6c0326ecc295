//! Colour only on a terminal, never with `NO_COLOR` or `CLICOLOR=0`. Text
//! passes `visible` first: the only escapes that reach it are added here.

use crate::memory::text::visible;

#[derive(Debug, Clone, Copy)]
pub struct Colour {
    on: bool,
}

impl Colour {
    pub fn for_stdout() -> Colour {
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
        Colour { on: terminal && crate::env::colour_allowed() }
    }

    fn paint(self, code: &str, text: &str) -> String {
        let text = visible(text);
        if self.on && !text.is_empty() { format!("\x1b[{code}m{text}\x1b[0m") } else { text }
    }

    pub fn plain(self, text: &str) -> String {
        visible(text)
    }

    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn number(self, text: &str) -> String {
        self.paint("33", text)
    }

    pub fn good(self, text: &str) -> String {
        self.paint("32", text)
    }

    pub fn warn(self, text: &str) -> String {
        self.paint("33", text)
    }

    pub fn bad(self, text: &str) -> String {
        self.paint("31", text)
    }

    /// A unified diff, line by line: headers bold, hunks cyan, `+` green,
    /// `-` red.
    pub fn diff(self, text: &str) -> String {
        let mut out = String::new();
        for line in text.split_inclusive('\n') {
            let body = line.strip_suffix('\n').unwrap_or(line);
            let painted = if body.starts_with("+++") || body.starts_with("---") {
                self.bold(body)
            } else if body.starts_with("@@") {
                self.paint("36", body)
            } else if body.starts_with('+') {
                self.good(body)
            } else if body.starts_with('-') {
                self.bad(body)
            } else {
                self.plain(body)
            };
            out.push_str(&painted);
            out.push_str(&line[body.len()..]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_is_added_around_visible_text_only() {
        let on = Colour { on: true };
        assert_eq!(on.bad("-x\x1b[2J"), "\x1b[31m-x\\u{1b}[2J\x1b[0m");
        assert_eq!(on.diff("+a\n b\n"), "\x1b[32m+a\x1b[0m\n b\n");
        let off = Colour { on: false };
        assert_eq!(off.diff("+a\n-b\n"), "+a\n-b\n");
        assert_eq!(off.bad("\x1b"), "\\u{1b}");
    }
}
