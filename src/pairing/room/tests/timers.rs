//! Simulations of the Room's timers: when it needs waking, the keep-alive ticks it decides,
//! and the alarm it sets only when what the alarm wakes for changes.

use super::*;
use crate::limits::KEEP_ALIVE_MS;

#[test]
fn a_quiet_stream_hears_a_tick_every_keep_alive_and_none_after_its_end() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let (asker, effects) = sim.call("g1", 1, true, 60_000);
    let (id, _) = sent_call(&effects, a);
    assert_eq!(sim.room.poll_timeout(), Some(sim.now + KEEP_ALIVE_MS), "the tick comes first");
    sim.later(KEEP_ALIVE_MS - 1);
    assert!(sim.go(Input::Timeout).is_empty(), "not yet");
    sim.later(1);
    assert_eq!(sim.go(Input::Timeout), [Effect::Reply(asker, Reply::Call(CallEvent::Tick))]);
    // A line restarts the quiet: the next tick is a keep-alive after it.
    sim.later(5_000);
    sim.say(a, &format!(r#"{{"type":"asking","id":{id},"sentence":"Delete?"}}"#));
    assert_eq!(sim.room.poll_timeout(), Some(sim.now + KEEP_ALIVE_MS));
    // Its end ends its ticks; a stream that is not one hears none.
    sim.say(a, &format!(r#"{{"type":"result","id":{id},"data":1}}"#));
    assert_eq!(sim.room.poll_timeout(), None, "nothing left to wake for");
    let (_, effects) = sim.call("g1", 2, false, 60_000);
    sent_call(&effects, a);
    assert_eq!(sim.room.poll_timeout(), Some(sim.now + 60_000), "its wait only");
    // A listener ticks as a listener; one gone ticks no more.
    let (listener, _) = sim.ask(Request::Listen { grant: "g1".into() });
    sim.later(KEEP_ALIVE_MS);
    let effects = sim.go(Input::Timeout);
    assert!(effects.contains(&Effect::Reply(listener, Reply::Listen(ListenEvent::Tick))));
    sim.go(Input::Gone { asker: listener });
    sim.later(KEEP_ALIVE_MS);
    assert!(replies(&sim.go(Input::Timeout), listener).is_empty());
}

#[test]
fn the_alarm_is_set_for_what_no_request_wakes_for_and_only_when_its_time_changes() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let alarms = |effects: &[Effect]| -> Vec<u64> {
        effects
            .iter()
            .filter_map(|e| if let Effect::SetAlarm(at) = e { Some(*at) } else { None })
            .collect()
    };
    let resumable = |id: u64| {
        Request::Call(CallRequest {
            wait_ms: 60_000,
            stream: true,
            resumable: true,
            ..call_request("g1", id)
        })
    };
    // A waited call sets no alarm: its request is in flight, and wakes for it.
    let (first, effects) = sim.ask(resumable(1));
    assert_eq!(alarms(&effects), [] as [u64; 0]);
    let (call, _) = sent_call(&effects, a);
    // Its stream drops: the call runs on, and only the alarm can wake for its wait.
    let until = sim.now + 60_000;
    assert_eq!(alarms(&sim.go(Input::Gone { asker: first })), [until]);
    // A later one changes nothing: the earliest is set already.
    sim.later(1_000);
    let (second, effects) = sim.ask(resumable(2));
    let (later_call, _) = sent_call(&effects, a);
    assert_eq!(alarms(&sim.go(Input::Gone { asker: second })), [] as [u64; 0]);
    // The alarm rings: the first gives up, and the alarm is set to the next.
    sim.now = until;
    let effects = sim.go(Input::Timeout);
    assert!(effects.contains(&Effect::Send(a, RelayMessage::Cancel { id: call })));
    assert_eq!(alarms(&effects), [until + 1_000]);
    sim.now = until + 1_000;
    let effects = sim.go(Input::Timeout);
    assert!(effects.contains(&Effect::Send(a, RelayMessage::Cancel { id: later_call })));
    assert_eq!(alarms(&effects), [] as [u64; 0], "nothing more to wake for");
    assert_eq!(sim.room.poll_timeout(), None);
}
