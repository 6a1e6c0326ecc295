//! What the screen shows, on the real CLI: the status line
//! leaves `saving…` when the save ends, with no new message to redraw it.

use std::time::{Duration, Instant};

use crate::app::{is_fork, report, wait_for};
use crate::scenarios::*;
use crate::standin::{Reply, StandIn};

/// Scenario 22: `install --statusline` sets `statusLine.refreshInterval`,
/// which 2.1.328 and 2.1.332 read: the status line is re-run every two
/// seconds besides at each message, so a save that ends while the user
/// reads shows its result at once. The fork answers after 6 s; nothing is
/// typed meanwhile.
#[test]
fn s22_the_status_line_leaves_saving_when_the_save_ends() {
    let Some((claude, _g)) = claude_alone() else { return };
    let standin = StandIn::start(|req| {
        if is_fork(req) {
            Reply::text(add_op("- E2E-REDRAWN: a save that ended")).after(Duration::from_secs(6))
        } else {
            Reply::text("ok")
        }
    });
    let app = app_configured(claude, &standin, "save_every_turns = 1\n");
    let out = app.ours(&["install", "--statusline"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(app.settings()["statusLine"]["refreshInterval"], 2);
    let (tmux, sid) = start_interactive(&app);
    std::thread::sleep(Duration::from_secs(2));
    interactive_turn(&tmux, &standin, &app, &sid, "a turn whose save is slow");
    wait_for(LIMIT, "saving… on the screen", || tmux.screen().contains("memory-save: saving…").then_some(()));
    wait_for(SAVE_LIMIT, "the save's end", || app.session_state(&sid).claimed_since().is_none().then_some(()));
    let ended = Instant::now();
    let shown = wait_for(Duration::from_secs(10), "the save's result on the screen, nothing typed", || {
        let screen = tmux.screen();
        (screen.contains("memory-save: +1") && !screen.contains("saving…")).then_some(screen)
    });
    report(
        "22 status line redraw",
        "seconds from the save's end to its result on screen",
        format!("{:.1}", ended.elapsed().as_secs_f64()),
    );
    assert!(shown.contains("memory-save: +1"), "{shown}");
    tmux.send_line("/exit");
}
