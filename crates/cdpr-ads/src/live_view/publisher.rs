//! The publisher thread: takes the snapshots off the queue, builds the messages with
//! `cdpr_core::recording::messages` (the same builders as the MCAP recordings) and logs them
//! on the live view's channels. All the allocation-heavy work of the live view happens here,
//! off the caller's thread.

use super::sender::{Counters, Queue, Snapshot};
use super::{LiveOptions, SCENE_PERIOD};
use cdpr_core::colors;
use cdpr_core::recording::messages::{
    self as m, RUN_TOPIC, RunSample, SCENE_TOPIC, SHADOW_CYCLE_TOPIC, ShadowCycle, TF_TOPIC,
};
use cdpr_core::robot::Robot;
use cdpr_core::run::{Record, RecordLayout};
use cdpr_core::sim::SimState;
use cdpr_core::trajectory::Sample;
use foxglove::messages::{FrameTransform, SceneUpdate};
use foxglove::{Channel, Context};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant, SystemTime};

/// How often the publisher looks at the stop flag while nothing comes.
const IDLE: Duration = Duration::from_millis(100);
/// How often drops and clients are logged (when they changed).
const LOG_EVERY: Duration = Duration::from_secs(10);

/// The live view's channels on its own context.
pub(super) struct Channels {
    run: Channel<RunSample>,
    tf: Channel<FrameTransform>,
    scene: Channel<SceneUpdate>,
    cycle: Option<Channel<ShadowCycle>>,
}

impl Channels {
    /// The channels, advertised to every client that connects (`extra` names the samples'
    /// extra values, in the `/run` channel's metadata).
    pub fn new(context: &Arc<Context>, options: &LiveOptions) -> Channels {
        let mut run = context.channel_builder(RUN_TOPIC);
        if !options.extra.is_empty() {
            run = run.add_metadata("extra", &options.extra.join(","));
        }
        Channels {
            run: run.build(),
            tf: context.channel_builder(TF_TOPIC).build(),
            scene: context.channel_builder(SCENE_TOPIC).build(),
            cycle: options
                .cycle_stats
                .then(|| context.channel_builder(SHADOW_CYCLE_TOPIC).build()),
        }
    }
}

/// The publisher's state: the robot drawn, the buffers a [`Record`] is built from, the
/// scene's schedule and the colour scale.
pub(super) struct Publisher {
    robot: Robot,
    channels: Channels,
    counters: Arc<Counters>,
    state: SimState,
    commanded: Sample,
    length_command: Vec<f64>,
    /// When the next scene is due.
    next_scene: Instant,
    /// The largest tension seen, N (the colour scale's top is its `nice_ceil`).
    peak_tension: f64,
}

impl Publisher {
    pub fn new(robot: Robot, channels: Channels, counters: Arc<Counters>) -> Publisher {
        let pose = cdpr_core::kinematics::Pose::from_array(robot.home);
        Publisher {
            robot,
            channels,
            counters,
            state: SimState {
                pose,
                ..SimState::default()
            },
            commanded: Sample {
                t: 0.0,
                pose,
                velocity: [0.0; 6],
                acceleration: [0.0; 6],
                segment: None,
            },
            length_command: Vec::new(),
            next_scene: Instant::now(),
            peak_tension: 0.0,
        }
    }

    /// Runs until `stop` is set: each snapshot published, its buffer recycled; at the stop,
    /// what is queued is published too.
    pub fn run(mut self, queue: Queue, stop: &AtomicBool, clients: impl Fn() -> usize) {
        let mut logged = (0, 0);
        let mut last_log = Instant::now();
        let mut last_crate_report = Instant::now();
        loop {
            if last_crate_report.elapsed() >= super::crate_log::EVERY {
                last_crate_report = Instant::now();
                super::crate_log::report_held();
            }
            match queue.rx.recv_timeout(IDLE) {
                Ok(snapshot) => {
                    self.publish(&snapshot);
                    queue.recycle(snapshot);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if stop.load(Ordering::Relaxed) {
                // What was offered before the stop is still published.
                while let Ok(snapshot) = queue.rx.try_recv() {
                    self.publish(&snapshot);
                    queue.recycle(snapshot);
                }
                break;
            }
            if last_log.elapsed() >= LOG_EVERY {
                last_log = Instant::now();
                let now = (clients(), self.counters.dropped.load(Ordering::Relaxed));
                if now != logged {
                    tracing::info!(
                        clients = now.0,
                        dropped = now.1,
                        "live view: {} client(s), {} snapshot(s) dropped so far",
                        now.0,
                        now.1
                    );
                    logged = now;
                }
            }
        }
    }

    /// Logs one snapshot: `/run` and `/tf` always, `/scene` when due, `/shadow/cycle` when it
    /// carries the statistics. A channel no client subscribed to costs nothing.
    fn publish(&mut self, s: &Snapshot) {
        let now = SystemTime::now();
        if let Some(robot) = &s.robot {
            self.robot = Robot::clone(robot);
            self.peak_tension = 0.0;
        }
        self.fill(s);
        let peak = s
            .tensions
            .iter()
            .copied()
            .filter(|f| f.is_finite())
            .fold(self.peak_tension, f64::max);
        self.peak_tension = peak;
        if self.channels.run.has_sinks() {
            let record = Record {
                commanded: &self.commanded,
                length_command: &self.length_command,
                tension_command: None,
                state: &self.state,
            };
            let layout = RecordLayout::new(&self.robot, Some(&record));
            let sample = RunSample::from_record(&layout, &record, &[], &s.extra);
            self.channels.run.log_with_time(&sample, now);
        }
        if self.channels.tf.has_sinks() {
            self.channels
                .tf
                .log_with_time(&m::platform_transform(&s.pose, s.time), now);
        }
        let scene_due = Instant::now() >= self.next_scene;
        if scene_due {
            // On the 30 Hz schedule, or from now when the snapshots paused.
            let after = self.next_scene + SCENE_PERIOD;
            self.next_scene = after.max(Instant::now());
            if self.channels.scene.has_sinks() {
                let scene = m::scene_update(
                    &self.robot,
                    &s.pose,
                    &self.state.tensions,
                    colors::nice_ceil(self.peak_tension),
                    s.time,
                );
                self.channels.scene.log_with_time(&scene, now);
                self.counters.scenes.fetch_add(1, Ordering::Relaxed);
            }
        }
        if let (Some(cycle), Some(channel)) = (&s.cycle, &self.channels.cycle)
            && channel.has_sinks()
        {
            channel.log_with_time(cycle, now);
        }
        self.counters.published.fetch_add(1, Ordering::Relaxed);
    }

    /// The record's buffers from `s`, padded with NaN to the robot's sizes (a face without
    /// tensions, a short vector): the sample then shows "no value" rather than failing.
    fn fill(&mut self, s: &Snapshot) {
        let (commands, channels) = if self.robot.is_cable_robot() {
            let n = self.robot.cable_count();
            (n, n)
        } else {
            (s.commanded_lengths.len(), s.lengths.len())
        };
        let copy = |to: &mut Vec<f64>, from: &[f64], n: usize| {
            to.clear();
            to.extend(from.iter().copied().take(n));
            to.resize(n, f64::NAN);
        };
        copy(&mut self.length_command, &s.commanded_lengths, commands);
        copy(&mut self.state.lengths, &s.lengths, channels);
        copy(&mut self.state.tensions, &s.tensions, channels);
        copy(&mut self.state.winch, &s.actuators, commands);
        self.state.time = s.time;
        self.state.pose = s.pose;
        self.commanded.t = s.time;
        self.commanded.pose = s.commanded;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdpr_core::fixtures::robot;

    fn publisher(name: &str) -> Publisher {
        let context = Context::new();
        let channels = Channels::new(&context, &LiveOptions::default());
        Publisher::new(robot(name), channels, Arc::new(Counters::default()))
    }

    #[test]
    fn a_snapshot_without_tensions_reads_as_nan_per_cable_not_as_a_short_row() {
        let mut p = publisher("uvigo8");
        // The virtual PLC's: lengths, no tensions; and one length short.
        let s = Snapshot {
            time: 0.5,
            commanded_lengths: vec![1.0; 8],
            lengths: vec![2.0; 7],
            ..Snapshot::default()
        };
        p.fill(&s);
        assert_eq!(p.length_command, [1.0; 8]);
        assert_eq!(&p.state.lengths[..7], &[2.0; 7]);
        assert!(p.state.lengths[7].is_nan());
        assert_eq!(p.state.tensions.len(), 8);
        assert!(p.state.tensions.iter().all(|f| f.is_nan()));
        let record = Record {
            commanded: &p.commanded,
            length_command: &p.length_command,
            tension_command: None,
            state: &p.state,
        };
        let sample = RunSample::from_record(
            &RecordLayout::new(&p.robot, Some(&record)),
            &record,
            &[],
            &[],
        );
        assert_eq!((sample.t, sample.tension.len()), (0.5, 8));
    }

    #[test]
    fn a_snapshot_carrying_a_robot_switches_the_scene_to_it() {
        let mut p = publisher("uvigo8");
        p.peak_tension = 500.0;
        let silva4 = robot("silva4");
        let s = Snapshot {
            robot: Some(Arc::new(silva4.clone())),
            tensions: vec![3.0; 4],
            ..Snapshot::default()
        };
        p.publish(&s);
        assert_eq!(p.robot, silva4);
        assert_eq!(p.state.tensions, [3.0; 4]);
        // The colour scale starts again with the new robot.
        assert_eq!(p.peak_tension, 3.0);
    }
}
