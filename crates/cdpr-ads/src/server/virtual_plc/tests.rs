use super::*;
use crate::server::symbols::SymbolTable;
use cdpr_core::fixtures::uvigo8;
use cdpr_core::trajectory::Sample;

/// x(t) = x0 + A(1 − cos(πt/T))/2 from home: peak 0.16 m/s and 0.49 m/s², inside uvigo8's
/// winch limits (0.5 m/s, 5 m/s²), sampled at 2 ms.
fn smooth_move(robot: &Robot) -> Trajectory {
    let (a, t_end, dt) = (0.1, 1.0, 0.002);
    let home = Pose::from_array(robot.home);
    let samples = (0..=(t_end / dt) as usize)
        .map(|k| {
            let t = k as f64 * dt;
            let mut pose = home;
            pose.position.x += a * (1.0 - (std::f64::consts::PI * t / t_end).cos()) / 2.0;
            Sample {
                t,
                pose,
                velocity: [0.0; 6],
                acceleration: [0.0; 6],
                segment: None,
            }
        })
        .collect();
    Trajectory {
        samples,
        segments: Vec::new(),
    }
}

fn core(robot: &Robot, trajectory: Trajectory) -> PlcCore {
    let memory = PlcMemory::new(SymbolTable::from_robot(robot).expect("table"));
    PlcCore::new(robot, trajectory, memory, Timing::default()).expect("core")
}

fn reals(core: &PlcCore, name: &str) -> Vec<f64> {
    let r = core.memory().table().lookup_str(name).expect("symbol");
    core.memory()
        .with_image(|img| memory::get_reals(img, &r).expect("reals"))
}

fn scalar(core: &PlcCore, name: &str) -> u32 {
    let r = core.memory().table().lookup_str(name).expect("symbol");
    core.memory()
        .with_image(|img| memory::get_u32(img, &r).expect("scalar"))
}

#[test]
fn limiter_tracks_a_feasible_target_exactly() {
    let dt = 0.002;
    // Starts at rest: 0.1 m/s, 0.2 m/s² at most.
    let target = |t: f64| 1.0 + 0.05 * (1.0 - (2.0 * t).cos());
    let mut lim = WinchLimiter::new(&[target(0.0)], 0.5, 5.0);
    for k in 1..2000 {
        let t = k as f64 * dt;
        lim.step(&[target(t)], dt);
        assert!((lim.positions[0] - target(t)).abs() < 1e-12, "tick {k}");
    }
}

#[test]
fn limiter_respects_velocity_and_acceleration_on_a_step() {
    let (dt, vmax, amax) = (0.002, 0.5, 5.0);
    let mut lim = WinchLimiter::new(&[1.0], vmax, amax);
    let mut positions = vec![1.0];
    for _ in 0..1000 {
        lim.step(&[1.2], dt);
        positions.push(lim.positions[0]);
    }
    // Independent check by finite differences of the positions alone.
    let v: Vec<f64> = positions.windows(2).map(|w| (w[1] - w[0]) / dt).collect();
    assert!(v.iter().all(|v| v.abs() <= vmax + 1e-9), "velocity limit");
    let a_max = v
        .windows(2)
        .map(|w| ((w[1] - w[0]) / dt).abs())
        .fold(0.0, f64::max);
    assert!(a_max <= amax + 1e-6, "acceleration {a_max}");
    let overshoot = positions.iter().fold(0.0f64, |m, p| m.max(p - 1.2));
    assert!(overshoot < 1e-4, "overshoot {overshoot}");
    assert!(
        (positions[positions.len() - 1] - 1.2).abs() < 1e-9,
        "settles"
    );
    // Time-optimal lower bound: accelerate and brake at amax, cruise at vmax.
    let t_min = 0.2 / vmax + vmax / amax;
    let reached = positions
        .iter()
        .position(|p| (p - 1.2).abs() < 1e-4)
        .expect("reached");
    assert!(
        (reached as f64 * dt) < t_min * 1.2,
        "{} s vs {t_min} s",
        reached as f64 * dt
    );
}

#[test]
fn geometry_is_published_in_mm_and_the_home_lengths_at_start() {
    let robot = uvigo8();
    let c = core(&robot, Trajectory::default());
    let a = reals(&c, "GVL_Shadow.aFrameAnchors");
    let b = reals(&c, "GVL_Shadow.aPlatformAnchors");
    for (k, cable) in robot.cables.iter().enumerate() {
        for axis in 0..3 {
            assert_eq!(a[3 * k + axis], cable.frame_anchor[axis] * 1000.0);
            assert_eq!(b[3 * k + axis], cable.platform_anchor[axis] * 1000.0);
        }
    }
    let ik = kinematics::inverse(&robot, &Pose::from_array(robot.home));
    let cmd = reals(&c, "GVL_Shadow.aCmdLengths");
    let angles = reals(&c, "GVL_Shadow.aCableAngles");
    for (k, g) in ik.cables.iter().enumerate() {
        assert!((cmd[k] - g.length * 1000.0).abs() < 1e-9);
        assert!((angles[2 * k] - g.angles().theta_z.to_degrees()).abs() < 1e-9);
        assert!((angles[2 * k + 1] - g.angles().theta_x.to_degrees()).abs() < 1e-9);
    }
    assert_eq!(
        reals(&c, "GVL_Shadow.aTcpPose"),
        vec![0.0, 0.0, 150.0, 0.0, 0.0, 0.0]
    );
}

#[test]
fn nc_task_plays_the_trajectory_through_ik_and_the_plc_task_counts() {
    let robot = uvigo8();
    let traj = smooth_move(&robot);
    let mut c = core(&robot, traj.clone());
    let hold = 100; // 200 ms of 2 ms ticks
    for tick in 1..=hold + 600u64 {
        c.tick();
        // The GVL holds what the last PLC cycle (every 5 NC ticks) copied from the NC: the set
        // point of that NC tick, beside that cycle's counter.
        let published = tick - tick % 5;
        let enable = scalar(&c, "GVL_Shadow.bMotionEnable") != 0;
        let t = (published.saturating_sub(hold)) as f64 * 0.002;
        assert_eq!(
            enable,
            published >= hold && t <= 1.0 + 1e-9,
            "enable at tick {tick}"
        );
        let pose = traj.sample_at(t).expect("sample").pose;
        let want = kinematics::lengths(&robot, &pose);
        let cmd = reals(&c, "GVL_Shadow.aCmdLengths");
        for (k, w) in want.iter().enumerate() {
            assert!((cmd[k] / 1000.0 - w).abs() < 1e-9, "tick {tick} cable {k}");
        }
        assert_eq!(
            u64::from(scalar(&c, "GVL_Shadow.nCycle")),
            tick / 5,
            "PLC cycle every 5 NC ticks"
        );
    }
    for _ in 0..300 {
        c.tick();
    }
    assert!(c.stats().finished);
    assert_eq!(
        scalar(&c, "GVL_Shadow.bMotionEnable"),
        0,
        "motion disabled at the end"
    );
}

#[test]
fn reaction_is_counted_from_the_echo() {
    let robot = uvigo8();
    let mut c = core(&robot, Trajectory::default());
    let echo = c
        .memory()
        .table()
        .lookup_str("GVL_Shadow.nShadowCycle")
        .expect("echo");
    for _ in 0..50 {
        c.tick();
        // A shadow that answers every NC tick with the counter it just read.
        let cycle = scalar(&c, "GVL_Shadow.nCycle");
        c.memory()
            .with_image(|img| memory::put_u32(img, &echo, cycle));
    }
    let r = &c.stats().reaction;
    assert_eq!(r.samples(), 9, "cycles 2..=10 see a new echo");
    assert_eq!((r.quantile(0.5), r.max), (Some(1), Some(1)));
    assert_eq!(scalar(&c, "GVL_Shadow.nReactionCycles"), 1);
}

#[test]
fn stop_over_ads_holds_the_tasks_and_bad_timing_is_refused() {
    let robot = uvigo8();
    let mut c = core(&robot, Trajectory::default());
    c.memory().set_ads_state(crate::wire::ads_state::STOP);
    for _ in 0..20 {
        c.tick();
    }
    assert_eq!(c.stats().nc_ticks, 0);
    let memory = PlcMemory::new(SymbolTable::from_robot(&robot).expect("table"));
    let timing = Timing {
        nc: Duration::from_millis(3),
        ..Timing::default()
    };
    let e = PlcCore::new(&robot, Trajectory::default(), memory, timing)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("multiple"), "{e}");
}

#[test]
fn quantiles_of_reaction_counts() {
    let mut r = ReactionStats::default();
    for v in [1, 1, 1, 2, 5] {
        r.record(v);
    }
    assert_eq!(r.quantile(0.5), Some(1));
    assert_eq!(r.quantile(0.8), Some(2));
    assert_eq!(r.quantile(0.99), Some(5));
    assert_eq!(r.samples(), 5);
    assert_eq!(ReactionStats::default().quantile(0.5), None);
}

/// A client that writes `nShadowCycle` ahead of `nCycle` (84 cycles ahead): no reaction of
/// 4 294 967 212 cycles, an echo ahead counted apart.
#[test]
fn an_echo_ahead_of_the_plc_is_no_reaction() {
    let robot = uvigo8();
    let mut c = core(&robot, Trajectory::default());
    let echo = c
        .memory()
        .table()
        .lookup_str("GVL_Shadow.nShadowCycle")
        .expect("echo");
    c.memory().with_image(|img| memory::put_u32(img, &echo, 85));
    for _ in 0..5 {
        c.tick();
    }
    let r = &c.stats().reaction;
    assert_eq!((r.samples(), r.max, r.ahead), (0, None, 1));
    // A real echo afterwards still counts.
    c.memory().with_image(|img| memory::put_u32(img, &echo, 1));
    for _ in 0..5 {
        c.tick();
    }
    let r = &c.stats().reaction;
    assert_eq!((r.samples(), r.max, r.ahead), (1, Some(1), 1));
}

/// A PLC task slowed to 2.5 periods per cycle (its hook sleeps 25 ms): every cycle still
/// carries exactly 5 NC ticks of PLC time, the stamps are start + cycles × 10 ms to the
/// 100 ns tick, and the cycles that started late are counted, none skipped.
#[test]
fn plc_time_is_cycles_times_the_period_under_a_slowed_task() {
    let robot = uvigo8();
    let mut c = core(&robot, smooth_move(&robot));
    let seen: Arc<Mutex<Vec<(u32, u64)>>> = Arc::default();
    {
        let seen = Arc::clone(&seen);
        c.set_cycle_hook(Box::new(move |cycle, stamp| {
            seen.lock().expect("lock").push((cycle, stamp));
            std::thread::sleep(Duration::from_millis(25));
        }));
    }
    let plc = VirtualPlc::start(c).expect("start");
    std::thread::sleep(Duration::from_millis(400));
    let stats = plc.stop();
    let seen = seen.lock().expect("lock").clone();
    assert!(seen.len() >= 5, "{seen:?}");
    assert_eq!(stats.plc_cycles as usize, seen.len());
    assert!(
        stats.nc_ticks >= 5 * u64::from(stats.plc_cycles)
            && stats.nc_ticks < 5 * u64::from(stats.plc_cycles) + 5,
        "{} NC ticks in {} PLC cycles",
        stats.nc_ticks,
        stats.plc_cycles
    );
    let (c0, t0) = seen[0];
    for (k, &(cycle, stamp)) in seen.iter().enumerate() {
        assert_eq!(cycle, c0 + k as u32, "no cycle skipped");
        assert_eq!(
            stamp - t0,
            u64::from(cycle - c0) * 100_000,
            "10 ms per cycle"
        );
    }
    assert!(stats.late_cycles >= 2, "late cycles counted: {stats:?}");
}

/// `--wait-for-client`: the tasks run, the trajectory waits for the gate.
#[test]
fn the_start_gate_holds_the_trajectory() {
    let robot = uvigo8();
    let mut c = core(&robot, smooth_move(&robot));
    let open = Arc::new(AtomicBool::new(false));
    {
        let open = Arc::clone(&open);
        c.set_start_gate(Box::new(move || open.load(Ordering::Relaxed)));
    }
    let start = reals(&c, "GVL_Shadow.aCmdLengths");
    for _ in 0..500 {
        c.tick();
    }
    assert_eq!(reals(&c, "GVL_Shadow.aCmdLengths"), start, "held");
    assert_eq!(scalar(&c, "GVL_Shadow.bMotionEnable"), 0);
    assert_eq!(c.stats().plc_cycles, 100, "the tasks ran");
    open.store(true, Ordering::Relaxed);
    // The hold (200 ms = 100 ticks) runs from the gate's opening, then the motion.
    for _ in 0..100 {
        c.tick();
    }
    assert_eq!(reals(&c, "GVL_Shadow.aCmdLengths"), start, "hold");
    for _ in 0..100 {
        c.tick();
    }
    assert_eq!(scalar(&c, "GVL_Shadow.bMotionEnable"), 1);
    assert_ne!(reals(&c, "GVL_Shadow.aCmdLengths"), start, "moving");
}
