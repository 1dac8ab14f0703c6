//! `cdpr view --foxglove`: the state the viewer draws, offered to the live view
//! (`cdpr_ads::live_view`) once a frame, after the playback advanced — a simulation, the demo,
//! a replay or the live shadow alike. The frame copies a few numbers when the sender is due
//! (≤ 100 Hz) and never waits: a busy publisher drops the snapshot and counts it.

use super::playback::{Playback, PlaybackSet};
use bevy::prelude::*;
use cdpr_ads::live_view::{LiveSender, Offered};
use cdpr_core::robot::Robot;
use std::sync::Arc;

/// The live view's sender, as a resource.
#[derive(Resource, Clone)]
pub struct FoxgloveFeed(pub LiveSender);

/// Offers each frame's state when the sender is due (added when `--foxglove` is given).
pub fn add(app: &mut App, sender: Option<LiveSender>) {
    if let Some(sender) = sender {
        app.insert_resource(FoxgloveFeed(sender))
            .add_systems(Update, offer.after(PlaybackSet));
    }
}

/// The playback's state now: pose, commanded pose and lengths, tensions. The robot goes
/// along (an `Arc`, cloned once per change) until the publisher has taken it.
fn offer(feed: Res<FoxgloveFeed>, playback: Res<Playback>, mut sent: Local<Option<Arc<Robot>>>) {
    if !feed.0.due() {
        return;
    }
    let robot = playback.robot();
    let changed = sent.as_deref() != Some(robot);
    let new_robot = changed.then(|| Arc::new(robot.clone()));
    let state = playback.state();
    let commanded_lengths: &[f64] = match (playback.driver(), playback.live_feed()) {
        (Some(driver), _) => driver.record().length_command,
        (None, Some(feed)) => &feed.latest.commanded_lengths,
        _ => &[],
    };
    let offered = feed.0.offer(|s| {
        s.time = state.time;
        s.commanded = *playback.commanded();
        s.pose = state.pose;
        s.commanded_lengths.extend_from_slice(commanded_lengths);
        s.lengths.extend_from_slice(&state.lengths);
        s.tensions.extend_from_slice(&state.tensions);
        if !robot.is_cable_robot() {
            s.actuators.extend_from_slice(&state.winch);
        }
        s.robot.clone_from(&new_robot);
    });
    if offered == Offered::Queued
        && let Some(r) = new_robot
    {
        *sent = Some(r);
    }
}

/// The live view (Foxglove, Lichtblick): the playback's state offered to the server each
/// frame, when one was started.
pub struct LiveViewPlugin(pub Option<LiveSender>);

impl Plugin for LiveViewPlugin {
    fn build(&self, app: &mut App) {
        add(app, self.0.clone());
    }
}
