//! MEMORY.md as lines with their kinds, and the edits an op makes to it.

use super::super::reply::Op;
use super::super::template::{self, CRITICAL_RULES, LineKind, PLACEHOLDER, SECTIONS, TOPIC_FILES};
use super::{check_bullet, strip_marker};

/// MEMORY.md as lines, with their kinds kept in step rather than classified
/// again for every op.
#[derive(Clone)]
pub struct Doc {
    pub lines: Vec<String>,
    kinds: Vec<LineKind>,
    /// Where the last item written (inserted or set) went.
    pub last_insert: Option<usize>,
}

/// A fence line: the only lines whose change changes the kind of others.
fn is_fence(line: &str) -> bool {
    let trimmed = line.trim_start();
    trimmed.starts_with("```") || trimmed.starts_with("~~~")
}

impl Doc {
    pub fn new(text: &str) -> Doc {
        Doc { lines: text.lines().map(str::to_string).collect(), kinds: template::classify(text), last_insert: None }
    }

    pub fn text(&self) -> String {
        let mut out = self.lines.join("\n");
        debug_assert_eq!(self.kinds, template::classify(&out), "kinds out of step with lines");
        out.push('\n');
        out
    }

    /// `template::is_in_template` on the kept kinds, without rendering the text.
    pub fn in_template(&self) -> bool {
        template::in_template(&self.lines, &self.kinds)
    }

    pub fn reclassify(&mut self) {
        self.kinds = template::classify(&self.lines.join("\n"));
    }

    /// Inserts a list item: plain text, so no other line changes kind.
    pub fn insert_item(&mut self, at: usize, item: String) {
        debug_assert!(item.starts_with("- "));
        self.lines.insert(at, item);
        self.kinds.insert(at, LineKind::Text);
        self.last_insert = Some(at);
    }

    /// Whether an op touches CRITICAL RULES (the review gate's business).
    pub fn touches_rules(&self, op: &Op) -> bool {
        let in_rules = |at: Option<usize>| at.is_some_and(|at| self.section_of(at) == Some(CRITICAL_RULES));
        match op {
            Op::Add { section, .. } => in_rules(self.find_heading(section)),
            Op::Remove { line } | Op::Replace { line, .. } => in_rules(self.locate(line)),
        }
    }

    pub fn set_item(&mut self, at: usize, item: String) {
        debug_assert!(item.starts_with("- "));
        let was_fence = is_fence(&self.lines[at]);
        self.lines[at] = item;
        self.last_insert = Some(at);
        if was_fence {
            self.reclassify();
        } else {
            self.kinds[at] = LineKind::Text;
        }
    }

    pub fn remove_line(&mut self, at: usize) -> String {
        let line = self.lines.remove(at);
        if is_fence(&line) {
            self.reclassify();
        } else {
            self.kinds.remove(at);
        }
        line
    }

    /// The `##` section (index into SECTIONS) a line belongs to.
    pub fn section_of(&self, at: usize) -> Option<usize> {
        let kinds = &self.kinds;
        (0..=at)
            .rev()
            .find(|&i| kinds[i] == LineKind::Section)
            .and_then(|i| SECTIONS.iter().position(|s| template::heading_name(&self.lines[i]) == *s))
    }

    /// Exactly, else after a list marker when exactly one line matches.
    pub fn locate(&self, wanted: &str) -> Option<usize> {
        let wanted = wanted.trim_end();
        if wanted.trim().is_empty() {
            return None;
        }
        if let Some(at) = self.lines.iter().position(|l| l.trim_end() == wanted) {
            return Some(at);
        }
        let key = strip_marker(wanted.trim());
        let mut matches = self.lines.iter().enumerate().filter(|(_, l)| strip_marker(l.trim()) == key);
        match (matches.next(), matches.next()) {
            (Some((at, _)), None) => Some(at),
            _ => None,
        }
    }

    pub fn protect(&self, at: usize) -> Result<(), String> {
        match self.kinds[at] {
            LineKind::Title | LineKind::Section => {
                Err("the title and the four ## section headings cannot be removed or replaced".into())
            }
            _ => Ok(()),
        }
    }

    /// The block a heading owns: the lines after it up to the next heading.
    pub fn block_end(&self, heading: usize) -> usize {
        let kinds = &self.kinds;
        (heading + 1..self.lines.len())
            .find(|&i| matches!(kinds[i], LineKind::Section | LineKind::Subheading | LineKind::Title))
            .unwrap_or(self.lines.len())
    }

    /// A `##` section first, then a `###` subheading, so a `### CRITICAL
    /// RULES` never takes adds meant for the section past the rules' policy.
    pub fn find_heading(&self, name: &str) -> Option<usize> {
        let want = template::heading_name(name);
        let kinds = &self.kinds;
        let named = |kind: LineKind| {
            (0..self.lines.len())
                .find(|&i| kinds[i] == kind && template::heading_name(&self.lines[i]).eq_ignore_ascii_case(want))
        };
        named(LineKind::Section).or_else(|| named(LineKind::Subheading))
    }

    /// `Ok(false)` when the bullet is there already.
    pub fn add(&mut self, section: &str, text: &str) -> Result<bool, String> {
        let bullet = check_bullet(text)?;
        let Some(heading) = self.find_heading(section) else {
            return Err(format!("MEMORY.md has no heading {:?}", template::heading_name(section)));
        };
        if self.lines.iter().any(|l| l.trim_end() == bullet) {
            return Ok(false);
        }
        self.insert_in_block(heading, bullet);
        Ok(true)
    }

    pub fn insert_in_block(&mut self, heading: usize, bullet: String) {
        let end = self.block_end(heading);
        let body: Vec<usize> = (heading + 1..end).filter(|&i| !self.lines[i].trim().is_empty()).collect();
        match body.as_slice() {
            [only] if self.lines[*only].trim() == PLACEHOLDER => self.set_item(*only, bullet),
            [] => self.insert_item(heading + 1, bullet),
            [.., last] => self.insert_item(last + 1, bullet),
        }
    }

    /// Returns the CRITICAL RULES bullet it retired, if it was one.
    /// The CRITICAL RULES bullet at `at`, if that is what stands there.
    pub fn rule_at(&self, at: usize) -> Option<&str> {
        let is_rule = self.section_of(at) == Some(CRITICAL_RULES)
            && self.kinds[at] == LineKind::Text
            && self.lines[at].trim() != PLACEHOLDER;
        is_rule.then_some(self.lines[at].as_str())
    }

    pub fn remove(&mut self, at: usize, offloading: bool) -> Result<Option<String>, String> {
        self.protect(at)?;
        let is_rule = self.rule_at(at).is_some();
        if is_rule && offloading {
            return Err(
                "a CRITICAL RULES bullet is not moved out while the file is over the offload mark; shorten it with a replace op instead"
                    .into(),
            );
        }
        let line = self.remove_line(at);
        Ok(is_rule.then_some(line))
    }

    pub fn replace(&mut self, at: usize, text: &str, over_cap: bool) -> Result<(), String> {
        self.protect(at)?;
        let bullet = check_bullet(text)?;
        if over_cap && bullet.chars().count() > self.lines[at].chars().count() {
            return Err("the file is over a cap, so a replace may only shorten its line".into());
        }
        self.set_item(at, bullet);
        Ok(())
    }

    pub fn list_topic(&mut self, name: &str) {
        let Some(heading) = self.find_heading(SECTIONS[TOPIC_FILES]) else {
            return;
        };
        let end = self.lines.len();
        let listed = self.lines[heading + 1..end].iter().any(|l| l.contains(name));
        if !listed {
            self.insert_in_block(heading, format!("- {name}"));
        }
    }

    /// A section whose last bullet went gets the placeholder back.
    pub fn fill_empty_sections(&mut self) {
        let kinds = &self.kinds;
        let sections: Vec<usize> = (0..self.lines.len()).filter(|&i| kinds[i] == LineKind::Section).collect();
        for &heading in sections.iter().rev() {
            let next = sections.iter().find(|&&s| s > heading).copied().unwrap_or(self.lines.len());
            if self.lines[heading + 1..next].iter().all(|l| l.trim().is_empty()) {
                self.insert_item(heading + 1, PLACEHOLDER.to_string());
            }
        }
    }
}
