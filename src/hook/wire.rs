//! Serde mirrors of Claude Code's hook input and output, tolerant (unknown
//! fields ignored, every field defaulted) so a newer Claude Code breaks no hook.

use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct HookInput {
    pub session_id: String,
    pub transcript_path: String,
    pub cwd: String,
    pub prompt_id: Option<String>,
    /// SessionStart: startup, resume, clear, compact, fork.
    pub source: Option<String>,
    /// UserPromptSubmit.
    pub prompt: Option<String>,
    /// Present only inside a subagent.
    pub agent_id: Option<String>,
    /// PreToolUse and PostToolUse.
    pub tool_name: Option<String>,
    pub tool_use_id: Option<String>,
    /// PostToolUse of the Skill tool: `{"skill": "greet"}` (measured).
    pub tool_input: Option<ToolInput>,
    pub effort: Option<Effort>,
}

/// Of a tool's input, what a hook of ours reads: the Skill tool's name,
/// and what a guard matches (Bash's command, an edit's path).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolInput {
    pub skill: Option<String>,
    pub command: Option<String>,
    pub file_path: Option<String>,
    pub notebook_path: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Effort {
    pub level: Option<String>,
}

impl HookInput {
    pub fn effort_level(&self) -> Option<String> {
        self.effort.as_ref().and_then(|e| e.level.clone())
    }
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookOutput {
    /// Shown to the user, not sent to the model (measured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<HookSpecificOutput>,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecificOutput {
    pub hook_event_name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    /// PreToolUse: `ask` or `deny`, never `allow`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision_reason: Option<String>,
}
