//! The hook events memory-save registers, in one table: Claude Code's name
//! for each, our `hook` word, and its hooks.json matcher (hooks.json is
//! checked against it by a test in `claude::hooks`).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    /// Before Bash and the edit tools: a CRITICAL RULE's guard asks first.
    PreToolUse,
    PostToolUse,
    /// PostToolUse again, for the Skill tool alone, so no other tool pays for it.
    Skill,
    Stop,
    PreCompact,
    SessionEnd,
}

impl HookEvent {
    /// Every event, in hooks.json's order.
    pub const ALL: [HookEvent; 8] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Skill,
        HookEvent::Stop,
        HookEvent::PreCompact,
        HookEvent::SessionEnd,
    ];

    /// Claude Code's name, the key in settings.json's `hooks`.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse | HookEvent::Skill => "PostToolUse",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    /// The word after `memory-save hook`.
    pub fn word(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session-start",
            HookEvent::UserPromptSubmit => "user-prompt-submit",
            HookEvent::PreToolUse => "pre-tool-use",
            HookEvent::PostToolUse => "post-tool-use",
            HookEvent::Skill => "skill",
            HookEvent::Stop => "stop",
            HookEvent::PreCompact => "pre-compact",
            HookEvent::SessionEnd => "session-end",
        }
    }

    /// The matcher of its hooks.json entry: SessionStart's sources (not
    /// `fork`, which a sealed fork would report), every tool for PostToolUse.
    #[cfg(test)]
    pub fn matcher(self) -> Option<&'static str> {
        match self {
            HookEvent::SessionStart => Some("startup|resume|clear|compact"),
            // The tools a guard can stop (`memory::guard::Tool::of_tool_name`).
            HookEvent::PreToolUse => Some("Bash|Edit|Write|MultiEdit|NotebookEdit"),
            HookEvent::PostToolUse => Some("*"),
            HookEvent::Skill => Some("Skill"),
            _ => None,
        }
    }

    /// How many commands it registers: SessionStart one per part of the block.
    pub fn commands(self) -> usize {
        match self {
            HookEvent::SessionStart => crate::memory::block::MAX_PARTS,
            _ => 1,
        }
    }

    pub fn from_word(word: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.word() == word)
    }

    /// The words of every event, for messages: `session-start, …`.
    pub fn words() -> String {
        HookEvent::ALL.map(HookEvent::word).join(", ")
    }

    /// Every hook command line (after the program) a full install registers,
    /// with its event, in hooks.json's order.
    pub fn command_lines() -> Vec<(&'static str, String)> {
        HookEvent::ALL
            .into_iter()
            .flat_map(|event| {
                (1..=event.commands()).map(move |part| match event {
                    HookEvent::SessionStart => (event.name(), format!("hook {} --part {part}", event.word())),
                    _ => (event.name(), format!("hook {}", event.word())),
                })
            })
            .collect()
    }
}
