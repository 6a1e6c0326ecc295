//! The save protocol as a pure state machine: each hook and worker step is a
//! transition of the session's `Protocol`, applied under its lock by the hooks
//! and `queue`, which carry out what it returns (docs/design.md §3). No I/O.
//!
//! The rules the transitions keep, property-tested below:
//! - no request is lost: a turn worth saving is saved, by the next save or
//!   by the session's end; one a full plan window held back stays worth a
//!   save for a later Stop, the end or the flush;
//! - at most one worker runs per session: a hook asks for one only when
//!   the job needs one, and the shell starts it only when none holds the
//!   worker lock;
//! - a claim is finished, or taken over once and then given up.

use crate::config::SaveLimits;
use crate::store::state::{Job, Protocol, Queued};

/// What a hook knows besides the protocol's own state.
#[derive(Debug, Clone, Copy)]
pub struct Facts {
    pub now: i64,
    /// memory-save is off for the session's project.
    pub off: bool,
    /// No person attends the session (`claude -p`).
    pub unattended: bool,
}

impl Facts {
    pub fn of(input: &crate::store::state::SessionInput, now: i64) -> Facts {
        Facts { now, off: input.off.is_some(), unattended: input.unattended }
    }
}

/// The worker's next step.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Run a save, claimed at `now`. `last_chance`: no warm turn will come
    /// after it (the session ended, or the idle flush asked for it).
    Save { last_chance: bool },
    /// A job whose worker died twice: dropped; its copy is the caller's to remove.
    GaveUp { copy: Option<String> },
    /// An idle flush is due in this many seconds.
    Wait(i64),
    /// Nothing to do: release the worker lock (under the session lock).
    Idle,
}

/// What PreCompact's transition leaves to its caller.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Compacted {
    /// The save was asked for, and the new copy is the state's.
    pub kept: bool,
    /// A copy no save will read any more.
    pub remove: Option<String>,
}

impl Job {
    /// A worker must run: a save is asked for or a claim must go on. An
    /// idle flush waits in the worker the Stop that held it started.
    pub fn needs_worker(&self) -> bool {
        matches!(self, Job::Pending | Job::Claimed { .. })
    }

    /// Anything for a worker, an idle flush included.
    pub fn is_active(&self) -> bool {
        !matches!(self, Job::Idle)
    }

    pub fn claimed_since(&self) -> Option<i64> {
        match self {
            Job::Claimed { since, .. } => Some(*since),
            _ => None,
        }
    }

    /// When turns held for the idle flush are saved, alone or behind a claim.
    pub fn held_until(&self) -> Option<i64> {
        match self {
            Job::Held { until } | Job::Claimed { queued: Queued::Held { until }, .. } => Some(*until),
            _ => None,
        }
    }

    /// A save is asked for and waits for a worker to take it.
    pub fn is_pending(&self) -> bool {
        matches!(self, Job::Pending | Job::Claimed { queued: Queued::Save, .. })
    }

    /// `queued` behind a running claim, else `alone`.
    fn behind_claim(self, queued: Queued, alone: Job) -> Job {
        match self {
            Job::Claimed { since, takeovers, .. } => Job::Claimed { since, takeovers, queued },
            _ => alone,
        }
    }
}

impl Protocol {
    /// A turn worth saving: a person spoke or a tool ran.
    pub fn worth_saving(&self) -> bool {
        self.turn.person_spoke || self.turn.tool_ran || self.turn.held_back
    }

    /// Worth saving and on; in a session no person attends, only after
    /// enough tool calls. `limits` is asked only when it matters: the common
    /// hook reads no config.
    pub fn save_due(&self, facts: Facts, limits: impl FnOnce() -> SaveLimits) -> bool {
        if !self.worth_saving() || facts.off {
            return false;
        }
        let limits = std::cell::LazyCell::new(limits);
        // A `claude -p` run is worth a save only when it did real work: each
        // save draws on what the run itself draws on.
        if facts.unattended && self.turn.tools < limits.unattended_min_tools {
            return false;
        }
        true
    }

    /// Turns the turn's flags into a save request: one more behind a
    /// running save, else a pending one (which covers held turns too).
    pub fn request(&mut self) {
        self.turn.unsaved = 0;
        self.turn.person_spoke = false;
        self.turn.tool_ran = false;
        self.turn.held_back = false;
        self.turn.tools = 0;
        self.watch.save_at_next_stop = false;
        self.job = self.job.behind_claim(Queued::Save, Job::Pending);
    }

    /// A turn due a save ended: with `save_every_turns` it is held until N
    /// have gathered or the idle flush; else, or when a request not yet taken
    /// would read it anyway, it is asked for at once.
    fn saved_or_held(&mut self, now: i64, limits: &SaveLimits) {
        self.turn.unsaved += 1;
        let covered = self.job.is_pending();
        if limits.every_turns <= 1 || self.turn.unsaved >= limits.every_turns || self.watch.save_at_next_stop || covered
        {
            self.request();
            return;
        }
        let until = now + limits.idle_flush.as_secs() as i64;
        self.job = self.job.behind_claim(Queued::Held { until }, Job::Held { until });
    }

    /// UserPromptSubmit. An open previous turn (Esc sends no Stop) is
    /// saved now. Returns whether a worker must run: an idle flush alone
    /// has its worker already, started by the Stop that held it.
    pub fn prompt(&mut self, facts: Facts, limits: impl FnOnce() -> SaveLimits, generated: bool) -> bool {
        if self.turn.open && self.save_due(facts, limits) {
            self.request();
        }
        self.turn.open = true;
        self.turn.ended = false;
        self.turn.person_spoke |= !generated;
        self.job.needs_worker()
    }

    /// PostToolUse of the main loop; `count_to`: in an unattended session,
    /// the calls are counted up to this.
    pub fn tool(&mut self, count_to: Option<u64>) {
        self.turn.tool_ran = true;
        if let Some(most) = count_to {
            self.turn.tools = (self.turn.tools + 1).min(most);
        }
    }

    /// Stop. Returns whether a worker must run (an idle flush included).
    pub fn stop(&mut self, facts: Facts, limits: impl Fn() -> SaveLimits) -> bool {
        self.turn.open = false;
        let read = std::cell::OnceCell::new();
        let limits = || *read.get_or_init(&limits);
        if self.save_due(facts, limits) {
            self.saved_or_held(facts.now, &limits());
        }
        self.job.is_active()
    }

    /// SessionEnd: an interrupted or held turn is saved now. Returns
    /// whether a worker must run.
    pub fn end(&mut self, facts: Facts, limits: impl FnOnce() -> SaveLimits) -> bool {
        self.turn.ended = true;
        if self.save_due(facts, limits) {
            self.request();
        }
        self.turn.open = false;
        self.job.is_active()
    }

    /// PreCompact: the held turns are asked for at once, from `copy` (taken
    /// before the summary) or at message `last`. A running save keeps the
    /// copy it reads; any other earlier copy is dropped.
    pub fn pre_compact(
        &mut self,
        facts: Facts,
        limits: impl FnOnce() -> SaveLimits,
        last: Option<String>,
        copy: Option<String>,
    ) -> Compacted {
        if !self.save_due(facts, limits) {
            return Compacted { kept: false, remove: None };
        }
        self.request();
        self.snapshot.resume_at = last;
        let remove = if self.job.claimed_since().is_none() { self.snapshot.copy.take() } else { None };
        self.snapshot.copy = copy.or(self.snapshot.copy.take());
        Compacted { kept: true, remove }
    }

    /// The job as a worker taking it now would leave it, for a command that
    /// reads a session no worker holds: a dead worker's claim is owed (a save
    /// runs) or, taken over once already, given up. `worker_next` decides,
    /// on a copy.
    pub fn without_worker(&self) -> Job {
        let mut taken = self.clone();
        match taken.worker_next(0, 0, || None) {
            Next::Save { .. } => Job::Pending,
            _ => taken.job,
        }
    }

    /// The worker's next step, under its worker lock. `idle`: the idle flush;
    /// `last_activity`: the transcript's last write, asked only for a due flush.
    pub fn worker_next(&mut self, now: i64, idle: i64, last_activity: impl FnOnce() -> Option<i64>) -> Next {
        let mut quiet = false;
        match self.job {
            Job::Idle => return Next::Idle,
            // A claim while we hold the worker lock: its worker died before
            // the write.
            Job::Claimed { queued: Queued::Save, .. } => {
                // A new request folds into it, since a save reads the whole
                // session.
            }
            Job::Claimed { takeovers, queued, .. } if takeovers >= 1 => {
                self.job = match queued {
                    Queued::Held { until } => Job::Held { until },
                    _ => Job::Idle,
                };
                self.snapshot.resume_at = None;
                return Next::GaveUp { copy: self.snapshot.copy.take() };
            }
            Job::Claimed { takeovers, queued, .. } => {
                self.job = Job::Claimed { since: now, takeovers: takeovers + 1, queued };
                return Next::Save { last_chance: self.turn.ended };
            }
            Job::Pending => {}
            Job::Held { until } => {
                if now < until {
                    return Next::Wait(until - now);
                }
                // Quiet since the last Stop is not quiet: a long turn writes
                // its transcript as it goes, and flushing in its middle
                // would pay a save the turn's own Stop makes anyway.
                if !self.turn.ended
                    && let Some(quiet_from) = last_activity().map(|t| t.min(now))
                    && now < quiet_from + idle
                {
                    self.job = Job::Held { until: quiet_from + idle };
                    return Next::Wait(quiet_from + idle - now);
                }
                self.request();
                quiet = true;
            }
        }
        self.job = Job::Claimed { since: now, takeovers: 0, queued: Queued::Nothing };
        Next::Save { last_chance: self.turn.ended || quiet }
    }

    /// The worker's save is written (or failed on our side, or waited): the
    /// claim clears and what waited behind it comes up. The copy and message
    /// it resumed go unless a new PreCompact asked again (`same_snapshot`).
    pub fn worker_done(&mut self, same_snapshot: bool, done: Done) {
        self.job = match self.job {
            Job::Claimed { queued: Queued::Save, .. } => Job::Pending,
            Job::Claimed { queued: Queued::Held { until }, .. } => Job::Held { until },
            Job::Claimed { queued: Queued::Nothing, .. } => Job::Idle,
            other => other,
        };
        if same_snapshot {
            self.snapshot = Default::default();
        }
        self.watch.saved_through = done.read_through.or(self.watch.saved_through);
        self.watch.save_at_next_stop = done.at_next_stop;
        if let Some(wake) = done.held_back {
            // Nothing of its turns was read: they stay worth a save, asked
            // for at the next Stop or the end, or by the worker at `wake`.
            self.turn.held_back = true;
            self.watch.save_at_next_stop = true;
            if let (Job::Idle, Some(until)) = (self.job, wake) {
                self.job = Job::Held { until };
            }
        }
    }
}

/// What a finished save tells the protocol.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Done {
    /// The fork's reply was read, so the turns up to its claim are saved.
    pub read_through: Option<i64>,
    /// The next Stop asks for a save at once (a cache that expired).
    pub at_next_stop: bool,
    /// The save did not run (the plan's usage window was full): its turns
    /// are held back, and the worker tries again then, when it is soon.
    pub held_back: Option<Option<i64>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::time::Duration;

    const IDLE: i64 = 100;

    fn limits(every: u64) -> impl Fn() -> SaveLimits + Copy {
        move || SaveLimits { every_turns: every, idle_flush: Duration::from_secs(IDLE as u64), unattended_min_tools: 0 }
    }

    /// A save whose fork's reply was read, claimed at `at`.
    fn read(at: i64) -> Done {
        Done { read_through: Some(at), ..Done::default() }
    }

    fn facts(now: i64) -> Facts {
        Facts { now, off: false, unattended: false }
    }

    #[derive(Debug, Clone)]
    enum Event {
        Prompt {
            generated: bool,
        },
        Tool,
        Stop,
        PreCompact,
        End,
        /// The worker, if one runs, takes its next step.
        Step,
        /// The running save is written.
        Finish,
        /// The worker is killed (its claim stays).
        Kill,
        Tick(u16),
        /// The running save finds the plan's window full: nothing read.
        Held,
    }

    fn event() -> impl Strategy<Value = Event> {
        prop_oneof![
            4 => any::<bool>().prop_map(|generated| Event::Prompt { generated }),
            4 => Just(Event::Tool),
            4 => Just(Event::Stop),
            1 => Just(Event::PreCompact),
            1 => Just(Event::End),
            6 => Just(Event::Step),
            4 => Just(Event::Finish),
            1 => Just(Event::Kill),
            3 => (0u16..300).prop_map(Event::Tick),
            1 => Just(Event::Held),
        ]
    }

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Worker {
        Looping,
        /// Saving what it read at this event.
        Saving(usize),
    }

    /// A session, its worker and the shell's rules around the machine:
    /// hooks start a worker when a transition asks and none runs.
    struct Sim {
        p: Protocol,
        now: i64,
        seq: usize,
        worker: Option<Worker>,
        every: u64,
        /// The last event that gave the session something to save.
        dirty: Option<usize>,
        /// The newest event a finished save read.
        covered: Option<usize>,
        /// The session was told that turns may go unsaved: a given-up claim
        /// (a report line).
        told: bool,
    }

    impl Sim {
        fn new(every: u64) -> Sim {
            Sim {
                p: Protocol::default(),
                now: 1_000,
                seq: 0,
                worker: None,
                every,
                dirty: None,
                covered: None,
                told: false,
            }
        }

        fn hook_started(&mut self, needs: bool) {
            if needs && self.worker.is_none() {
                self.worker = Some(Worker::Looping);
            }
        }

        fn apply(&mut self, event: &Event) {
            self.seq += 1;
            let (now, every) = (self.now, self.every);
            match *event {
                Event::Prompt { generated } => {
                    let needs = self.p.prompt(facts(now), limits(every), generated);
                    if !generated {
                        self.dirty = Some(self.seq);
                    }
                    self.hook_started(needs);
                }
                Event::Tool => {
                    self.p.tool(None);
                    self.dirty = Some(self.seq);
                }
                Event::Stop => {
                    let needs = self.p.stop(facts(now), limits(every));
                    self.hook_started(needs);
                }
                Event::PreCompact => {
                    let copy = Some(format!("c{}", self.seq));
                    self.p.pre_compact(facts(now), limits(every), Some("m".into()), copy);
                    let needs = self.p.job.is_active();
                    self.hook_started(needs);
                }
                Event::End => {
                    let needs = self.p.end(facts(now), limits(every));
                    self.hook_started(needs);
                }
                Event::Step => {
                    self.step();
                }
                Event::Finish => {
                    if let Some(Worker::Saving(seen)) = self.worker {
                        self.p.worker_done(true, read(now));
                        self.covered = self.covered.max(Some(seen));
                        self.worker = Some(Worker::Looping);
                    }
                }
                Event::Kill => self.worker = None,
                Event::Tick(seconds) => self.now += i64::from(seconds),
                Event::Held => {
                    if let Some(Worker::Saving(_)) = self.worker {
                        let wake = self.seq.is_multiple_of(2).then_some(now + 50);
                        self.p.worker_done(true, Done { held_back: Some(wake), ..Done::default() });
                        self.worker = Some(Worker::Looping);
                    }
                }
            }
            self.check();
        }

        /// Returns the wait the worker asked for, if any.
        fn step(&mut self) -> Option<i64> {
            if self.worker != Some(Worker::Looping) {
                return None;
            }
            match self.p.worker_next(self.now, IDLE, || None) {
                Next::Save { .. } => self.worker = Some(Worker::Saving(self.seq)),
                Next::GaveUp { .. } => self.told = true,
                Next::Wait(seconds) => return Some(seconds),
                Next::Idle => self.worker = None,
            }
            None
        }

        fn check(&self) {
            if let Job::Claimed { takeovers, .. } = self.p.job {
                assert!(takeovers <= 1, "a claim taken over {takeovers} times");
            }
            if self.p.job.needs_worker() && self.worker.is_none() {
                // Only a killed worker leaves a job without one; its next
                // hook (or the project's next start) starts another.
                assert!(self.p.job.claimed_since().is_some() || matches!(self.p.job, Job::Pending));
            }
        }

        /// The session ends and its worker runs to the end, undisturbed.
        fn drain(&mut self) {
            // A killed worker's claim is taken over by the project's next
            // SessionStart (`take_over_ended`).
            self.apply(&Event::End);
            if self.p.job.is_active() && self.worker.is_none() {
                self.worker = Some(Worker::Looping);
            }
            for _ in 0..100 {
                match self.worker {
                    None => break,
                    Some(Worker::Saving(_)) => self.apply(&Event::Finish),
                    Some(Worker::Looping) => {
                        self.seq += 1;
                        if let Some(wait) = self.step() {
                            self.now += wait;
                        }
                    }
                }
            }
            assert!(self.worker.is_none(), "the worker never went idle: {:?}", self.p);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

        /// Arbitrary hooks, worker steps, deaths, held saves and time: the
        /// protocol's rules hold after every event, and at the end every
        /// turn is saved, or the session was told it may not be.
        #[test]
        fn the_protocol_keeps_its_rules(events in proptest::collection::vec(event(), 0..60), every in 1u64..6) {
            let mut sim = Sim::new(every);
            for event in &events {
                sim.apply(event);
            }
            // Hooks after a kill restart the worker; a Stop does it here.
            sim.apply(&Event::Stop);
            sim.drain();
            prop_assert!(matches!(sim.p.job, Job::Idle), "{:?}", sim.p.job);
            let lost = sim.dirty > sim.covered;
            prop_assert!(!lost || sim.told, "turns lost untold: dirty at {:?}, saved through {:?}", sim.dirty, sim.covered);
            if !sim.told {
                prop_assert!(!sim.p.worth_saving() && sim.p.turn.unsaved == 0);
            }
        }
    }

    /// The cases the property names, one by one.
    #[test]
    fn a_batch_gathers_then_saves_and_one_more_waits_behind_a_running_save() {
        let mut p = Protocol::default();
        let l = limits(3);
        for _ in 0..2 {
            p.prompt(facts(0), l, false);
            assert!(p.stop(facts(0), l), "a held turn starts a worker for its flush");
            assert_eq!(p.job, Job::Held { until: IDLE });
        }
        p.prompt(facts(0), l, false);
        p.stop(facts(0), l);
        assert_eq!(p.job, Job::Pending);
        assert_eq!(p.worker_next(5, IDLE, || None), Next::Save { last_chance: false });
        // A turn ends while it runs: held behind it, then asked for.
        p.prompt(facts(6), l, false);
        p.stop(facts(6), l);
        assert_eq!(p.job, Job::Claimed { since: 5, takeovers: 0, queued: Queued::Held { until: 106 } });
        p.worker_done(true, read(5));
        assert_eq!(p.job, Job::Held { until: 106 });
        assert_eq!(p.watch.saved_through, Some(5));
        assert_eq!(p.worker_next(50, IDLE, || None), Next::Wait(56));
        // The transcript was written at 60: quiet from then.
        assert_eq!(p.worker_next(106, IDLE, || Some(60)), Next::Wait(54));
        assert_eq!(p.worker_next(160, IDLE, || Some(60)), Next::Save { last_chance: true });
    }

    #[test]
    fn a_dead_workers_claim_is_taken_over_once_then_given_up() {
        let mut p = Protocol::default();
        p.prompt(facts(0), limits(1), false);
        p.stop(facts(0), limits(1));
        p.snapshot.copy = Some("copy".into());
        assert_eq!(p.worker_next(1, IDLE, || None), Next::Save { last_chance: false });
        // Killed; the next worker finds the claim.
        assert_eq!(p.worker_next(2, IDLE, || None), Next::Save { last_chance: false });
        assert_eq!(p.job, Job::Claimed { since: 2, takeovers: 1, queued: Queued::Nothing });
        assert_eq!(p.worker_next(3, IDLE, || None), Next::GaveUp { copy: Some("copy".into()) });
        assert_eq!(p.job, Job::Idle);
        // A request made meanwhile folds into the claim: a fresh one.
        p.job = Job::Claimed { since: 2, takeovers: 1, queued: Queued::Save };
        assert_eq!(p.worker_next(4, IDLE, || None), Next::Save { last_chance: false });
        assert_eq!(p.job, Job::Claimed { since: 4, takeovers: 0, queued: Queued::Nothing });
    }

    #[test]
    fn a_dead_claim_reads_as_owed_until_its_takeover_is_used_up() {
        let claimed = |takeovers, queued| Job::Claimed { since: 1, takeovers, queued };
        let held = Queued::Held { until: 50 };
        let cases = [
            (claimed(0, Queued::Nothing), Job::Pending),
            (claimed(0, held), Job::Pending),
            (claimed(0, Queued::Save), Job::Pending),
            (claimed(1, Queued::Nothing), Job::Idle),
            (claimed(1, held), Job::Held { until: 50 }),
            (claimed(1, Queued::Save), Job::Pending),
            (Job::Held { until: 50 }, Job::Held { until: 50 }),
            (Job::Idle, Job::Idle),
        ];
        for (job, shown) in cases {
            let p = Protocol { job, ..Protocol::default() };
            assert_eq!(p.without_worker(), shown, "{job:?}");
            assert_eq!(p.job, job, "a reading changes nothing");
        }
    }

    /// A save the plan's full window held back read nothing: its turns stay
    /// worth a save at the next Stop and the end, and the worker comes back
    /// when the window frees soon.
    #[test]
    fn a_save_a_full_window_held_back_keeps_its_turns() {
        let mut p = Protocol::default();
        p.prompt(facts(0), limits(5), false);
        p.tool(None);
        assert!(p.end(facts(0), limits(5)));
        assert_eq!(p.worker_next(1, IDLE, || None), Next::Save { last_chance: true });
        p.worker_done(true, Done { held_back: Some(Some(40)), ..Done::default() });
        assert_eq!(p.job, Job::Held { until: 40 });
        assert!(p.worth_saving() && p.watch.saved_through.is_none());
        assert_eq!(p.worker_next(41, IDLE, || None), Next::Save { last_chance: true });
        // Not soon: no worker waits; the next turn's Stop asks at once.
        p.worker_done(true, Done { held_back: Some(None), ..Done::default() });
        assert_eq!(p.job, Job::Idle);
        p.prompt(facts(50), limits(5), false);
        assert!(p.stop(facts(50), limits(5)), "asked at once, not after five turns");
        assert_eq!(p.job, Job::Pending);
    }
}
